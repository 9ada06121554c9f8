# nbcx_mpi_fortran(OUT WHAT): OUT is set, in the caller's scope, to the MPI
# library's Fortran wrapper (mpif90.openmpi for mpicc.openmpi, mpif90.mpich
# for mpicc.mpich; the cache variable NBCX_MPI_Fortran_COMPILER names
# another) when there is one and it runs, else to "", with a status line
# saying that WHAT is left out and why. The wrapper is installed with the
# MPI's headers even without its Fortran compiler (gfortran,
# scripts/install-deps): running it tells. Used by tests/fortran and apps.
function(nbcx_mpi_fortran out what)
  set(${out} "" PARENT_SCOPE)
  if(NOT NBCX_MPI_Fortran_COMPILER)
    get_filename_component(_cc "${MPI_C_COMPILER}" NAME)
    string(REGEX REPLACE "^mpicc" "mpif90" _fc "${_cc}")
    find_program(NBCX_MPI_Fortran_COMPILER NAMES ${_fc})
  endif()
  if(NOT NBCX_MPI_Fortran_COMPILER)
    message(STATUS "nbcx: no MPI Fortran wrapper found (${_fc}): ${what} "
                   "left out")
    return()
  endif()
  execute_process(COMMAND ${NBCX_MPI_Fortran_COMPILER} --version
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT _rc EQUAL 0)
    message(STATUS "nbcx: ${NBCX_MPI_Fortran_COMPILER} does not run (no "
                   "gfortran?): ${what} left out")
    return()
  endif()
  set(${out} ${NBCX_MPI_Fortran_COMPILER} PARENT_SCOPE)
endfunction()
