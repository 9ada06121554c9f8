# nbcx-check with bad arguments must exit with status 2 and say why on
# stderr, whatever the argument.
foreach(args "--op;nosuch" "--op;bcast;--alg;nosuch" "--ranks;0" "--ranks;5-2"
             "--count;-1" "--type;quad" "--frobnicate" "--count"
             "--budget-s;-1" "--budget-s;x" "--max-mem;8X" "--max-mem;-1")
  execute_process(COMMAND ${CMD} ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "nbcx-check ${args}: exit status ${rc}, expected 2")
  endif()
  if(NOT err MATCHES "nbcx-check: ")
    message(FATAL_ERROR "nbcx-check ${args}: no message on stderr")
  endif()
endforeach()
