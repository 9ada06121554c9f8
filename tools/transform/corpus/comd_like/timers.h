#ifndef TIMERS_H
#define TIMERS_H

enum { computeTimer, commTimer, nTimers };
void startTimer(int which);
void stopTimer(int which);
double timerTotal(int which);

#endif
