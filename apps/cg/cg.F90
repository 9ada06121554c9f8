! cg.F90 - apps/cg/cg.c's conjugate gradient in Fortran 2008 (use
! mpi_f08; issue 36): a 3-D 7-point Poisson matrix (the Dirichlet
! Laplacian of an n x n x n grid), distributed by z planes, b = A * ones,
! so the exact solution is all ones. Each iteration gathers the search
! vector p on every rank (allgatherv) and reduces two dot products
! (allreduce).
!
!   --variant blocking   MPI_Allgatherv, MPI_Allreduce
!   --variant native-nb  MPI_Iallgatherv while the rows of interior
!                        planes are computed from the rank's own p, and
!                        MPI_Iallreduce of r.r while x += alpha p
!
! Run unmodified under libnbcx-pmpi (nbcx-run), the native-nb variant's
! nonblocking collectives are served by nbcx through the shim's Fortran
! entry points: that is the "shim" variant of tools/bench-apps.
!
! Prints, on rank 0, the lines tools/bench-apps reads:
!   RESULT cg_f90 variant=V ranks=P iterations=I unknowns=N
!          rel_residual=R error=E verified=yes|no
!   TIME cg_f90 variant=V ranks=P total_s=T comm_s=C
! (times the maximum over ranks; comm_s the time inside the collective
! calls and waits). Verified: residual below --tol and error below 1e-6;
! exit status 1 otherwise.
!
!   mpiexec -n 2 ./app_cg_f90 --variant native-nb --n 32
program cg_f90
  use mpi_f08
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer :: n = 32, maxit = 1000
  real(dp) :: tol = 1.0e-10_dp
  character(len=64) :: variant = 'blocking'
  logical :: nb
  integer :: rank, nprocs, r, z, planes, nl, nzl, zfirst, plane, ntot, it, i
  integer, allocatable :: counts(:), displs(:)
  real(dp), allocatable :: x(:), rv(:), ap(:), ones(:)
  ! (buffers of nonblocking calls: the compiler must not move their
  ! accesses across the wait)
  real(dp), allocatable, asynchronous :: p(:), pfull(:)
  real(dp), asynchronous :: loc, rrnew
  real(dp) :: rr, rr0, pap, alpha, beta, rel, e, etot, err
  real(dp) :: t0, t1, tc, times(2)
  type(MPI_Request) :: req

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call options()
  nb = variant == 'native-nb'
  zfirst = 0
  nzl = 0

  plane = n * n
  ntot = plane * n
  allocate(counts(0:nprocs - 1), displs(0:nprocs - 1))
  z = 0
  do r = 0, nprocs - 1
    planes = n / nprocs
    if (r < mod(n, nprocs)) planes = planes + 1
    counts(r) = planes * plane
    displs(r) = z * plane
    if (r == rank) then
      zfirst = z
      nzl = planes
    end if
    z = z + planes
  end do
  nl = nzl * plane
  allocate(x(nl + 1), rv(nl + 1), p(nl + 1), ap(nl + 1), pfull(ntot), &
           ones(ntot))
  x = 0
  ones = 1
  call spmv(rv, zfirst, zfirst, zfirst + nzl, ones, 0)  ! r = b - A*0
  p(1:nl) = rv(1:nl)

  tc = 0
  t0 = MPI_Wtime()
  loc = dot_product(rv(1:nl), rv(1:nl))
  call allreduce(loc, rr)
  rr0 = rr
  it = 0
  rel = sqrt(rr / rr0)
  do while (it < maxit .and. rel > tol)
    it = it + 1
    t1 = MPI_Wtime()
    if (nb) then
      call MPI_Iallgatherv(p, nl, MPI_DOUBLE_PRECISION, pfull, counts, &
                           displs, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, req)
    else
      call MPI_Allgatherv(p, nl, MPI_DOUBLE_PRECISION, pfull, counts, &
                          displs, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    end if
    tc = tc + (MPI_Wtime() - t1)
    ! Interior planes from the rank's own p, meanwhile.
    if (nzl > 2) call spmv(ap, zfirst, zfirst + 1, zfirst + nzl - 1, p, zfirst)
    if (nb) then
      t1 = MPI_Wtime()
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      tc = tc + (MPI_Wtime() - t1)
    end if
    if (nzl > 0) then
      call spmv(ap, zfirst, zfirst, zfirst + 1, pfull, 0)
      if (nzl > 1) call spmv(ap, zfirst, zfirst + nzl - 1, zfirst + nzl, &
                             pfull, 0)
    end if
    loc = dot_product(p(1:nl), ap(1:nl))
    call allreduce(loc, pap)
    alpha = rr / pap
    rv(1:nl) = rv(1:nl) - alpha * ap(1:nl)
    loc = dot_product(rv(1:nl), rv(1:nl))
    t1 = MPI_Wtime()
    if (nb) then
      call MPI_Iallreduce(loc, rrnew, 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                          MPI_COMM_WORLD, req)
    else
      call MPI_Allreduce(loc, rrnew, 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                         MPI_COMM_WORLD)
    end if
    tc = tc + (MPI_Wtime() - t1)
    x(1:nl) = x(1:nl) + alpha * p(1:nl)   ! while r.r is reduced
    if (nb) then
      t1 = MPI_Wtime()
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      tc = tc + (MPI_Wtime() - t1)
    end if
    beta = rrnew / rr
    rr = rrnew
    rel = sqrt(rr / rr0)
    p(1:nl) = rv(1:nl) + beta * p(1:nl)
  end do
  times(1) = MPI_Wtime() - t0
  times(2) = tc

  ! Verification, outside the kernel's communication.
  e = 0
  do i = 1, nl
    e = e + (x(i) - 1.0_dp)**2
  end do
  call MPI_Allreduce(e, etot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE_PRECISION, MPI_MAX, &
                     MPI_COMM_WORLD)
  err = sqrt(etot / real(ntot, dp))
  if (rank == 0) then
    write (*, '(a,a,a,i0,a,i0,a,i0,a,es18.12,a,es18.12,a,a)') &
      'RESULT cg_f90 variant=', trim(variant), ' ranks=', nprocs, &
      ' iterations=', it, ' unknowns=', ntot, ' rel_residual=', rel, &
      ' error=', err, ' verified=', &
      trim(merge('yes', 'no ', rel <= tol .and. err < 1.0e-6_dp))
    write (*, '(a,a,a,i0,a,f0.6,a,f0.6)') 'TIME cg_f90 variant=', &
      trim(variant), ' ranks=', nprocs, ' total_s=', times(1), &
      ' comm_s=', times(2)
  end if
  call MPI_Finalize()
  if (.not. (rel <= tol .and. err < 1.0e-6_dp)) stop 1

contains

  subroutine options()
    integer :: k, nargs, stat
    character(len=64) :: key, val
    nargs = command_argument_count()
    k = 1
    do while (k <= nargs)
      call get_command_argument(k, key)
      if (k + 1 > nargs) call usage(key)
      call get_command_argument(k + 1, val)
      select case (key)
      case ('--variant')
        variant = val
        if (variant /= 'blocking' .and. variant /= 'native-nb') call usage(key)
      case ('--n')
        read (val, *, iostat=stat) n
        if (stat /= 0 .or. n < 1 .or. n > 1024) call usage(key)
      case ('--maxit')
        read (val, *, iostat=stat) maxit
        if (stat /= 0 .or. maxit < 1) call usage(key)
      case ('--tol')
        read (val, *, iostat=stat) tol
        if (stat /= 0 .or. .not. (tol > 0 .and. tol < 1)) call usage(key)
      case default
        call usage(key)
      end select
      k = k + 2
    end do
  end subroutine options

  subroutine usage(key)
    character(len=*), intent(in) :: key
    if (rank == 0) write (*, '(a,a)') 'cg_f90: bad option ', trim(key), &
      'usage: cg_f90 [--variant blocking|native-nb] [--n N] [--tol T] ' // &
      '[--maxit M]'
    call MPI_Finalize()
    stop 2
  end subroutine usage

  subroutine allreduce(a, s)
    real(dp), intent(in) :: a
    real(dp), intent(out) :: s
    real(dp) :: t
    t = MPI_Wtime()
    call MPI_Allreduce(a, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    tc = tc + (MPI_Wtime() - t)
  end subroutine allreduce

  ! y(rows of planes z0..z1-1) = A p, rows numbered from plane zoff; p
  ! read from src, whose first plane is global plane zsrc.
  subroutine spmv(y, zoff, z0, z1, src, zsrc)
    real(dp), intent(inout) :: y(:)
    real(dp), intent(in) :: src(:)
    integer, intent(in) :: zoff, z0, z1, zsrc
    integer :: zz, j, ii, c
    real(dp) :: s
    do zz = z0, z1 - 1
      do j = 0, n - 1
        do ii = 0, n - 1
          c = (zz - zsrc) * plane + j * n + ii + 1
          s = 6.0_dp * src(c)
          if (ii > 0) s = s - src(c - 1)
          if (ii < n - 1) s = s - src(c + 1)
          if (j > 0) s = s - src(c - n)
          if (j < n - 1) s = s - src(c + n)
          if (zz > 0) s = s - src(c - plane)
          if (zz < n - 1) s = s - src(c + plane)
          y((zz - zoff) * plane + j * n + ii + 1) = s
        end do
      end do
    end do
  end subroutine spmv

end program cg_f90
