! freport.F90 - known call sites for NBCX_PMPI_REPORT from Fortran
! (tests/pmpi/check_report.py): MPI_IALLREDUCE from two lines of the
! main program and MPI_IBCAST from a subroutine, through `use mpi`. The
! report must name the Fortran caller (its function and file:line), not
! the shim's C entry point. Rank 0 prints one "expect" line per site
! (operation, path, calls and bytes summed over ranks, function as
! gfortran names it: MAIN__, bcast_helper_,
! file:line from __LINE__ on the line of the call). Built with -g.
subroutine bcast_helper(buf, n, line)
  use mpi
  implicit none
  integer, intent(in) :: n
  integer, intent(inout) :: buf(n)
  integer, intent(out) :: line
  integer :: req, ierr
  call MPI_IBCAST(buf, n, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr); line = __LINE__
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
end subroutine bcast_helper

program freport
  use mpi
  implicit none
  integer, parameter :: na = 50, ra = 6, nb = 5, rb = 2, nc = 8, rc = 3
  integer :: a_in(na), a_out(na), c(nc)
  double precision :: b_in(nb), b_out(nb)
  integer :: rank, nprocs, ierr, req, k, i, line_a, line_b, line_c, bad, allbad
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  bad = 0
  do i = 1, na
    a_in(i) = i + rank
  end do
  do i = 1, nb
    b_in(i) = 0.5d0 * (i + rank)
  end do

  do k = 1, ra
    call MPI_IALLREDUCE(a_in, a_out, na, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr); line_a = __LINE__
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    do i = 1, na
      if (a_out(i) /= nprocs * i + nprocs * (nprocs - 1) / 2) bad = bad + 1
    end do
  end do
  do k = 1, rb
    call MPI_IALLREDUCE(b_in, b_out, nb, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, req, ierr); line_b = __LINE__
    flag = .false.
    do while (.not. flag)
      call MPI_TEST(req, flag, MPI_STATUS_IGNORE, ierr)
    end do
    do i = 1, nb
      if (b_out(i) /= 0.5d0 * (i + nprocs - 1)) bad = bad + 1
    end do
  end do
  do k = 1, rc
    c = -1
    if (rank == 0) c = [(1000 * k + i, i = 1, nc)]
    call bcast_helper(c, nc, line_c)
    do i = 1, nc
      if (c(i) /= 1000 * k + i) bad = bad + 1
    end do
  end do

  call MPI_ALLREDUCE(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a,i0,1x,i0,a,i0)') 'expect iallreduce nbcx ', ra * nprocs, &
      ra * nprocs * na * 4, ' MAIN__ freport.F90:', line_a
    write (*, '(a,i0,1x,i0,a,i0)') 'expect iallreduce nbcx ', rb * nprocs, &
      rb * nprocs * nb * 8, ' MAIN__ freport.F90:', line_b
    write (*, '(a,i0,1x,i0,a,i0)') 'expect ibcast nbcx ', rc * nprocs, &
      rc * nprocs * nc * 4, ' bcast_helper_ freport.F90:', line_c
    if (allbad == 0) then
      print '(a,i0,a)', 'freport: passed on ', nprocs, ' ranks'
    else
      print '(a,i0,a)', 'freport: FAILED (', allbad, ' wrong elements)'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (allbad /= 0) stop 1
end program freport
