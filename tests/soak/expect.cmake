# cmake -P expect.cmake RC REGEX COMMAND...: runs COMMAND, passes when its
# exit status is RC and its output (stdout and stderr) matches REGEX.
set(args)
set(i 3) # CMAKE_ARGV0..2: cmake -P expect.cmake
while(i LESS CMAKE_ARGC)
  list(APPEND args "${CMAKE_ARGV${i}}")
  math(EXPR i "${i} + 1")
endwhile()
list(POP_FRONT args want_rc regex)
execute_process(COMMAND ${args} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL want_rc)
  message(FATAL_ERROR "exit status ${rc}, expected ${want_rc}")
endif()
if(NOT "${out}${err}" MATCHES "${regex}")
  message(FATAL_ERROR "output does not match: ${regex}")
endif()
