# run_fcolls.cmake -DCMD=a|b|c [-DNATIVE=1]: runs a Fortran test (fcolls)
# under the shim with NBCX_PMPI_VERBOSE=1 and checks: exit 0, "fcolls:
# PASS", and the shim's report "total N nbcx, 0 native" for the N calls
# the program says it made ("fcolls: issued N", all ranks). NATIVE=1
# (NBCX_PMPI=off): PASS, and nbcx served nothing.
# -DLARGE=program (fcolls built with -DLARGE_COUNT): first checks that the
# program calls the large-count form of every nonblocking and persistent
# collective (mpi_f08's mpi_<op>_f08ts_large_, which call MPI_<op>_c) and
# no other form, so the test cannot pass on the int calls.
if(LARGE)
  execute_process(COMMAND nm -u ${LARGE} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run_fcolls: nm -u ${LARGE} failed (${rc})")
  endif()
  string(REGEX MATCHALL "mpi_(i[a-z_]+|[a-z_]+_init)_f08ts_\n" small "${syms}")
  set(missing)
  foreach(op bcast reduce allreduce gather gatherv scatter scatterv
             allgather allgatherv alltoall alltoallv alltoallw reduce_scatter
             reduce_scatter_block scan exscan neighbor_allgather
             neighbor_allgatherv neighbor_alltoall neighbor_alltoallv
             neighbor_alltoallw)
    foreach(f mpi_i${op} mpi_${op}_init)
      if(NOT syms MATCHES "${f}_f08ts_large_")
        list(APPEND missing ${f})
      endif()
    endforeach()
  endforeach()
  if(small OR missing)
    message(FATAL_ERROR "run_fcolls: ${LARGE} does not call the large-count "
                        "forms of ${missing}; it calls these int forms: ${small}")
  endif()
  message("run_fcolls: the large-count forms of 21 nonblocking and 21 persistent collectives")
endif()
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
