# check_generated.cmake -DPY=python -DGEN=generator -DOUT=committed file:
# fails unless the generator's output is the committed file.
execute_process(COMMAND ${PY} ${GEN} RESULT_VARIABLE rc OUTPUT_VARIABLE now)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed (${rc})")
endif()
file(READ ${OUT} committed)
if(NOT now STREQUAL committed)
  message(FATAL_ERROR "${OUT} is not what ${GEN} writes: regenerate it "
                      "(python3 ${GEN} > ${OUT})")
endif()
message("${OUT}: up to date")
