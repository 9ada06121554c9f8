# run_fcolls.cmake -DCMD=a|b|c [-DNATIVE=1]: runs a Fortran test (fcolls)
# under the shim with NBCX_PMPI_VERBOSE=1 and checks: exit 0, "fcolls:
# PASS", and the shim's report "total N nbcx, 0 native" for the N calls
# the program says it made ("fcolls: issued N", all ranks). NATIVE=1
# (NBCX_PMPI=off): PASS, and nbcx served nothing.
string(REPLACE "|" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run_fcolls: exit status ${rc}")
endif()
if(NOT out MATCHES "fcolls: PASS")
  message(FATAL_ERROR "run_fcolls: no PASS")
endif()
if(NOT out MATCHES "fcolls: issued ([0-9]+)")
  message(FATAL_ERROR "run_fcolls: the program said no count")
endif()
set(issued ${CMAKE_MATCH_1})
if(NATIVE)
  if(err MATCHES "nbcx-pmpi:   total [1-9][0-9]* nbcx")
    message(FATAL_ERROR "run_fcolls: nbcx served calls with the shim off")
  endif()
  message("run_fcolls: ${issued} calls, native (the shim off)")
  return()
endif()
if(NOT err MATCHES "nbcx-pmpi: Fortran \\(")
  message(FATAL_ERROR "run_fcolls: the shim did not report the Fortran "
                      "bindings at MPI_INIT (not loaded, or not seen)")
endif()
if(NOT err MATCHES "nbcx-pmpi:   total ([0-9]+) nbcx, ([0-9]+) native")
  message(FATAL_ERROR "run_fcolls: no report from the shim")
endif()
if(NOT CMAKE_MATCH_1 EQUAL issued OR NOT CMAKE_MATCH_2 EQUAL 0)
  message(FATAL_ERROR "run_fcolls: the shim served ${CMAKE_MATCH_1} and "
                      "sent ${CMAKE_MATCH_2} native of ${issued} calls")
endif()
message("run_fcolls: ${issued} calls, all served by nbcx")
