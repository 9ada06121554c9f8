! fcolls.F90 - libnbcx-pmpi's Fortran test: every nonblocking and
! persistent collective, in place and not, compared with the blocking
! collective of the same run; Fortran datatypes with MPI_Iallreduce and
! a Fortran user operation (MPI_OP_CREATE, not commutative) with
! MPI_Iscan; a collective and point-to-point requests in one
! MPI_Waitall; every completion function in turn. One source for the three bindings (preprocessed):
!   -DBIND_MPIFH: include 'mpif.h'; -DBIND_MPI: use mpi; -DBIND_F08:
!   use mpi_f08. -DPERSIST_MPIX: Open MPI 4.1's MPIX_<op>_init.
!   -DLARGE_COUNT (with -DBIND_F08, MPI 4.0: MPICH): every count of the
!   nonblocking and persistent calls is INTEGER(KIND=MPI_COUNT_KIND) and
!   the displacements of the v and w forms MPI_COUNT_KIND and
!   MPI_ADDRESS_KIND, so mpi_f08 resolves each call to its large-count
!   form, which calls the C MPI_<op>_c (the blocking references too).
! Rank 0 prints "fcolls: issued N" (nonblocking calls and persistent
! requests made, all ranks) and "fcolls: PASS" or the failures; the test
! script checks the shim's report (NBCX_PMPI_VERBOSE) against N.
#ifdef PERSIST_MPIX
#define PI(x) MPIX_/**/x/**/_init
#else
#define PI(x) MPI_/**/x/**/_init
#endif
#ifdef LARGE_COUNT
#define NC(x) int(x, MPI_COUNT_KIND)
#define CK MPI_COUNT_KIND
#define AK MPI_ADDRESS_KIND
#else
#define NC(x) x
#define CK kind(0)
#define AK kind(0)
#endif
#ifdef BIND_F08
#define HANDLE(t) type(t)
#else
#define HANDLE(t) integer
#endif

module fcolls_ops
#ifdef BIND_F08
  use mpi_f08
#elif defined(BIND_MPI)
  use mpi
#endif
  implicit none
#ifdef BIND_MPIFH
  include 'mpif.h'
#endif
  private
  public :: myop, op_other_type
  ! Calls of myop with a datatype other than MPI_INTEGER (the library
  ! passes the program's handle: MPI_INTEGER).
  integer :: op_other_type = 0
contains
  ! A Fortran user operation: inoutvec = invec + 2 * inoutvec (not
  ! commutative; MPI applies it in rank order).
#ifdef BIND_F08
  subroutine myop(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    if (datatype /= MPI_INTEGER) op_other_type = op_other_type + 1
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a + 2 * b
  end subroutine
#else
  subroutine myop(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    if (datatype /= MPI_INTEGER) op_other_type = op_other_type + 1
    inoutvec = invec + 2 * inoutvec
  end subroutine
#endif
end module

program fcolls
#ifdef BIND_F08
  use mpi_f08
#ifdef PERSIST_MPIX
  use mpi_f08_ext
#endif
#elif defined(BIND_MPI)
  use mpi
#ifdef PERSIST_MPIX
  use mpi_ext
#endif
#endif
  use fcolls_ops
  implicit none
#ifdef BIND_MPIFH
  include 'mpif.h'
#endif
  integer, parameter :: n = 3
  HANDLE(MPI_Comm) :: comm, cart
  HANDLE(MPI_Request) :: req
  HANDLE(MPI_Info) :: info
  HANDLE(MPI_Op) :: uop
  integer :: rank, np, ierr, mode, nissued, nfail, ncomplete, provided
  integer :: total, k, deg, nb(2), ign(4)
  character(len=32) :: cur = ''
  logical :: ip

  nissued = 0
  nfail = 0
  ncomplete = 0
  if (command_argument_count() > 0) then
    call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  else
    call MPI_Init(ierr)
  end if
  comm = MPI_COMM_WORLD
  info = MPI_INFO_NULL
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, np, ierr)
  ! The neighbourhood collectives' communicator: a chain (rank - 1, rank
  ! + 1 where they exist) as a distributed graph (MPICH 4.0.2's mpi_f08
  ! neighbor_alltoallw asks every communicator for a distributed graph's
  ! degrees, so not a Cartesian one; and a chain, not a ring, as a ring of
  ! 2 has one neighbour twice, where the libraries differ).
  deg = 0
  if (rank > 0) then
    deg = deg + 1
    nb(deg) = rank - 1
  end if
  if (rank < np - 1) then
    deg = deg + 1
    nb(deg) = rank + 1
  end if
  call MPI_Dist_graph_create_adjacent(comm, deg, nb, MPI_UNWEIGHTED, deg, nb, MPI_UNWEIGHTED, info, .false., &
    cart, ierr)
  call MPI_Op_create(myop, .false., uop, ierr)

#ifdef BIND_F08
  ign = [MPI_STATUS_IGNORE%MPI_SOURCE, MPI_STATUS_IGNORE%MPI_TAG, MPI_STATUSES_IGNORE(1)%MPI_SOURCE, &
    MPI_STATUSES_IGNORE(1)%MPI_TAG]
#else
  ign = [MPI_STATUS_IGNORE(MPI_SOURCE), MPI_STATUS_IGNORE(MPI_TAG), MPI_STATUSES_IGNORE(MPI_SOURCE, 1), &
    MPI_STATUSES_IGNORE(MPI_TAG, 1)]
#endif
  do mode = 0, 1
    cur = 'barrier'
    call t_barrier()
    cur = 'bcast'
    call t_bcast()
    cur = 'neighbors'
    call t_neighbors()
    do k = 0, 1
      ip = k == 1
      cur = 'reduce'
      call t_reduce()
      cur = 'allreduce'
      call t_allreduce()
      cur = 'gather'
      call t_gather()
      cur = 'scatter'
      call t_scatter()
      cur = 'allgather'
      call t_allgather()
      cur = 'alltoall'
      call t_alltoall()
      cur = 'gatherv'
      call t_gatherv()
      cur = 'scatterv'
      call t_scatterv()
      cur = 'allgatherv'
      call t_allgatherv()
      cur = 'alltoallv'
      call t_alltoallv()
      cur = 'alltoallw'
      call t_alltoallw()
      cur = 'reduce_scatter'
      call t_reduce_scatter()
      cur = 'reduce_scatter_block'
      call t_reduce_scatter_block()
      cur = 'scan'
      call t_scan()
      cur = 'exscan'
      call t_exscan()
    end do
    cur = 'types'
    call t_types()
  end do
  cur = 'mixed'
  call t_mixed()

  ! Fortran's MPI_STATUS(ES)_IGNORE were recognised: never written.
#ifdef BIND_F08
  call expect('MPI_STATUS(ES)_IGNORE untouched', all(ign == [MPI_STATUS_IGNORE%MPI_SOURCE, &
    MPI_STATUS_IGNORE%MPI_TAG, MPI_STATUSES_IGNORE(1)%MPI_SOURCE, MPI_STATUSES_IGNORE(1)%MPI_TAG]))
#else
  call expect('MPI_STATUS(ES)_IGNORE untouched', all(ign == [MPI_STATUS_IGNORE(MPI_SOURCE), &
    MPI_STATUS_IGNORE(MPI_TAG), MPI_STATUSES_IGNORE(MPI_SOURCE, 1), MPI_STATUSES_IGNORE(MPI_TAG, 1)]))
#endif
  call expect('user op given MPI_INTEGER', op_other_type == 0)
  call MPI_Op_free(uop, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Allreduce(nissued, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  if (rank == 0) then
    print '(a,i0)', 'fcolls: issued ', total
    if (nfail == 0) then
      print '(a)', 'fcolls: PASS'
    else
      print '(a,i0,a)', 'fcolls: FAIL (', nfail, ' failures)'
    end if
  end if
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1

contains

  subroutine fill(a, m, salt)
    integer, intent(in) :: m, salt
    integer, intent(out) :: a(m)
    integer :: i
    do i = 1, m
      a(i) = 1000 * rank + 10 * i + salt
    end do
  end subroutine

  subroutine chk(what, a, b, m)
    character(*), intent(in) :: what
    integer, intent(in) :: m, a(m), b(m)
    if (any(a /= b)) then
      nfail = nfail + 1
      print '(a,i0,a,a,a,i0,a,l1,a,*(i0,1x))', 'rank ', rank, ': FAIL ', what, &
        ' mode=', mode, ' in_place=', ip, ': got ', a, -1, b
    end if
  end subroutine

  subroutine expect(what, cond)
    character(*), intent(in) :: what
    logical, intent(in) :: cond
    if (.not. cond) then
      nfail = nfail + 1
      print '(a,i0,a,a,a,a,a,i0,a,l1)', 'rank ', rank, ': FAIL ', what, ' (in ', trim(cur), ', mode=', mode, &
        ' in_place=', ip
    end if
  end subroutine

  ! Completes req (mode 1: starts it first, and frees it after), with a
  ! different completion function each time.
  subroutine complete()
    HANDLE(MPI_Request) :: rs(2)
#ifdef BIND_F08
    type(MPI_Status) :: st, sts(2)
#else
    integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
#endif
    integer :: idx, outc, idxs(2), c
    logical :: flag
    nissued = nissued + 1
    if (mode == 1) then
      if (mod(ncomplete, 2) == 0) then
        call MPI_Start(req, ierr)
      else
        rs(1) = req
        call MPI_Startall(1, rs, ierr)
        req = rs(1)
      end if
    end if
    c = mod(ncomplete, 9)
    ncomplete = ncomplete + 1
    select case (c)
    case (0)
#ifdef BIND_F08
      ierr = MPI_SUCCESS
      call MPI_Wait(req, st) ! mpi_f08: ierror is optional
#else
      call MPI_Wait(req, st, ierr)
#endif
    case (1)
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    case (2)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(req, flag, st, ierr)
      end do
    case (3)
      rs(1) = MPI_REQUEST_NULL
      rs(2) = req
      call MPI_Waitall(2, rs, sts, ierr)
      req = rs(2)
    case (4)
      rs(1) = req
      rs(2) = MPI_REQUEST_NULL
      call MPI_Waitany(2, rs, idx, MPI_STATUS_IGNORE, ierr)
      call expect('waitany index', idx == 1)
      req = rs(1)
    case (5)
      rs(1) = MPI_REQUEST_NULL
      rs(2) = req
      outc = 0
      do while (outc == 0)
        call MPI_Waitsome(2, rs, outc, idxs, MPI_STATUSES_IGNORE, ierr)
      end do
      call expect('waitsome index', outc == 1 .and. idxs(1) == 2)
      req = rs(2)
    case (6)
      rs(1) = req
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(1, rs, flag, MPI_STATUSES_IGNORE, ierr)
      end do
      req = rs(1)
    case (7)
      rs(1) = req
      flag = .false.
      do while (.not. flag)
        call MPI_Testany(1, rs, idx, flag, st, ierr)
      end do
      call expect('testany index', idx == 1)
      req = rs(1)
    case default
      flag = .false.
      do while (.not. flag)
        call MPI_Request_get_status(req, flag, MPI_STATUS_IGNORE, ierr)
      end do
      rs(1) = req
      outc = 0
      do while (outc == 0)
        call MPI_Testsome(1, rs, outc, idxs, sts, ierr)
      end do
      req = rs(1)
    end select
    call expect('completion ierror', ierr == MPI_SUCCESS)
    if (mode == 1) then
      call expect('persistent request kept', req /= MPI_REQUEST_NULL)
      call MPI_Request_free(req, ierr)
    end if
    call expect('request freed', req == MPI_REQUEST_NULL)
  end subroutine

  subroutine t_barrier()
#ifdef BIND_F08
    if (mode == 0) call MPI_Ibarrier(comm, req)
#else
    if (mode == 0) call MPI_Ibarrier(comm, req, ierr)
#endif
    if (mode == 1) call PI(Barrier)(comm, info, req, ierr)
    call complete()
  end subroutine

  subroutine t_bcast()
    integer :: b(n), ref(n)
    character(len=5) :: s, sref
    call fill(ref, n, 1)
    call MPI_Bcast(ref, n, MPI_INTEGER, np - 1, comm, ierr)
    call fill(b, n, 1)
    if (mode == 0) call MPI_Ibcast(b, NC(n), MPI_INTEGER, np - 1, comm, req, ierr)
    if (mode == 1) call PI(Bcast)(b, NC(n), MPI_INTEGER, np - 1, comm, info, req, ierr)
    call complete()
    call chk('bcast', b, ref, n)
    sref = 'hello'
    s = 'xxxxx'
    if (rank == 0) s = sref
    if (mode == 0) call MPI_Ibcast(s, NC(5), MPI_CHARACTER, 0, comm, req, ierr)
    if (mode == 1) call PI(Bcast)(s, NC(5), MPI_CHARACTER, 0, comm, info, req, ierr)
    call complete()
    call expect('bcast MPI_CHARACTER', s == sref)
  end subroutine

  subroutine t_reduce()
    integer :: sb(n), rb(n), ref(n)
    call fill(sb, n, 2)
    ref = 0
    call MPI_Reduce(sb, ref, n, MPI_INTEGER, MPI_SUM, 0, comm, ierr)
    rb = sb
    if (ip .and. rank == 0) then
      if (mode == 0) call MPI_Ireduce(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, 0, comm, req, ierr)
      if (mode == 1) call PI(Reduce)(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, 0, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Ireduce(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, 0, comm, req, ierr)
      if (mode == 1) call PI(Reduce)(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, 0, comm, info, req, ierr)
    end if
    call complete()
    if (rank == 0) call chk('reduce', rb, ref, n)
  end subroutine

  subroutine t_allreduce()
    integer :: sb(n), rb(n), ref(n)
    call fill(sb, n, 3)
    call MPI_Allreduce(sb, ref, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    rb = sb
    if (ip) then
      if (mode == 0) call MPI_Iallreduce(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Allreduce)(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Iallreduce(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Allreduce)(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    end if
    call complete()
    call chk('allreduce', rb, ref, n)
  end subroutine

  subroutine t_gather()
    integer :: sb(n), rb(n * np), ref(n * np)
    call fill(sb, n, 4)
    ref = 0
    call MPI_Gather(sb, n, MPI_INTEGER, ref, n, MPI_INTEGER, 0, comm, ierr)
    rb = 0
    rb(rank * n + 1:rank * n + n) = sb
    if (ip .and. rank == 0) then
      if (mode == 0) call MPI_Igather(MPI_IN_PLACE, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Gather)(MPI_IN_PLACE, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, 0, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Igather(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Gather)(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, 0, comm, info, req, ierr)
    end if
    call complete()
    if (rank == 0) call chk('gather', rb, ref, n * np)
  end subroutine

  subroutine t_scatter()
    integer :: sb(n * np), rb(n), ref(n)
    call fill(sb, n * np, 5)
    call MPI_Scatter(sb, n, MPI_INTEGER, ref, n, MPI_INTEGER, 0, comm, ierr)
    rb = -1
    if (ip .and. rank == 0) then
      if (mode == 0) call MPI_Iscatter(sb, NC(n), MPI_INTEGER, MPI_IN_PLACE, NC(n), MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Scatter)(sb, NC(n), MPI_INTEGER, MPI_IN_PLACE, NC(n), MPI_INTEGER, 0, comm, info, req, ierr)
      rb = ref
    else
      if (mode == 0) call MPI_Iscatter(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Scatter)(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, 0, comm, info, req, ierr)
    end if
    call complete()
    call chk('scatter', rb, ref, n)
  end subroutine

  subroutine t_allgather()
    integer :: sb(n), rb(n * np), ref(n * np)
    call fill(sb, n, 6)
    call MPI_Allgather(sb, n, MPI_INTEGER, ref, n, MPI_INTEGER, comm, ierr)
    rb = 0
    rb(rank * n + 1:rank * n + n) = sb
    if (ip) then
      if (mode == 0) call MPI_Iallgather(MPI_IN_PLACE, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Allgather)(MPI_IN_PLACE, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Iallgather(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Allgather)(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, info, req, ierr)
    end if
    call complete()
    call chk('allgather', rb, ref, n * np)
  end subroutine

  subroutine t_alltoall()
    integer :: sb(n * np), rb(n * np), ref(n * np)
    call fill(sb, n * np, 7)
    call MPI_Alltoall(sb, n, MPI_INTEGER, ref, n, MPI_INTEGER, comm, ierr)
    rb = sb
    if (ip) then
      if (mode == 0) call MPI_Ialltoall(MPI_IN_PLACE, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Alltoall)(MPI_IN_PLACE, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Ialltoall(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Alltoall)(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, comm, info, req, ierr)
    end if
    call complete()
    call chk('alltoall', rb, ref, n * np)
  end subroutine

  ! The v collectives: rank i's block has i + 1 elements, displaced by one
  ! gap element each.
  subroutine layout(cnt, dsp, total)
    integer(kind=CK), intent(out) :: cnt(np)
    integer(kind=AK), intent(out) :: dsp(np)
    integer, intent(out) :: total
    integer :: i
    total = 0
    do i = 1, np
      cnt(i) = i
      dsp(i) = total + 1
      total = total + i + 1
    end do
  end subroutine

  subroutine t_gatherv()
    integer(kind=CK) :: cnt(np)
    integer(kind=AK) :: dsp(np)
    integer :: tot
    integer :: sb(np), rb(np * (np + 3)), ref(np * (np + 3))
    call layout(cnt, dsp, tot)
    call fill(sb, np, 8)
    ref = 0
    call MPI_Gatherv(sb, NC(rank + 1), MPI_INTEGER, ref, cnt, dsp, MPI_INTEGER, 0, comm, ierr)
    rb = 0
    rb(dsp(rank + 1) + 1:dsp(rank + 1) + rank + 1) = sb(1:rank + 1)
    if (ip .and. rank == 0) then
      if (mode == 0) call MPI_Igatherv(MPI_IN_PLACE, NC(0), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Gatherv)(MPI_IN_PLACE, NC(0), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, 0, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Igatherv(sb, NC(rank + 1), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Gatherv)(sb, NC(rank + 1), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, 0, comm, info, req, &
        ierr)
    end if
    call complete()
    if (rank == 0) call chk('gatherv', rb(1:tot), ref(1:tot), tot)
  end subroutine

  subroutine t_scatterv()
    integer(kind=CK) :: cnt(np)
    integer(kind=AK) :: dsp(np)
    integer :: tot
    integer :: sb(np * (np + 3)), rb(np), ref(np)
    call layout(cnt, dsp, tot)
    call fill(sb, np * (np + 3), 9)
    ref = -1
    call MPI_Scatterv(sb, cnt, dsp, MPI_INTEGER, ref, NC(rank + 1), MPI_INTEGER, 0, comm, ierr)
    rb = -1
    if (ip .and. rank == 0) then
      if (mode == 0) call MPI_Iscatterv(sb, cnt, dsp, MPI_INTEGER, MPI_IN_PLACE, NC(1), MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Scatterv)(sb, cnt, dsp, MPI_INTEGER, MPI_IN_PLACE, NC(1), MPI_INTEGER, 0, comm, info, req, &
        ierr)
      rb = ref
    else
      if (mode == 0) call MPI_Iscatterv(sb, cnt, dsp, MPI_INTEGER, rb, NC(rank + 1), MPI_INTEGER, 0, comm, req, ierr)
      if (mode == 1) call PI(Scatterv)(sb, cnt, dsp, MPI_INTEGER, rb, NC(rank + 1), MPI_INTEGER, 0, comm, info, req, &
        ierr)
    end if
    call complete()
    call chk('scatterv', rb, ref, np)
  end subroutine

  subroutine t_allgatherv()
    integer(kind=CK) :: cnt(np)
    integer(kind=AK) :: dsp(np)
    integer :: tot
    integer :: sb(np), rb(np * (np + 3)), ref(np * (np + 3))
    call layout(cnt, dsp, tot)
    call fill(sb, np, 10)
    ref = 0
    call MPI_Allgatherv(sb, NC(rank + 1), MPI_INTEGER, ref, cnt, dsp, MPI_INTEGER, comm, ierr)
    rb = 0
    rb(dsp(rank + 1) + 1:dsp(rank + 1) + rank + 1) = sb(1:rank + 1)
    if (ip) then
      if (mode == 0) call MPI_Iallgatherv(MPI_IN_PLACE, NC(0), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Allgatherv)(MPI_IN_PLACE, NC(0), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, info, req, &
        ierr)
    else
      if (mode == 0) call MPI_Iallgatherv(sb, NC(rank + 1), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Allgatherv)(sb, NC(rank + 1), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, info, req, &
        ierr)
    end if
    call complete()
    call chk('allgatherv', rb(1:tot), ref(1:tot), tot)
  end subroutine

  ! alltoallv: n elements to every rank, displaced by one gap element.
  subroutine t_alltoallv()
    integer(kind=CK) :: cnt(np)
    integer(kind=AK) :: dsp(np)
    integer :: i
    integer :: sb((n + 1) * np), rb((n + 1) * np), ref((n + 1) * np)
    do i = 1, np
      cnt(i) = n
      dsp(i) = (i - 1) * (n + 1)
    end do
    call fill(sb, (n + 1) * np, 11)
    ref = 0
    call MPI_Alltoallv(sb, cnt, dsp, MPI_INTEGER, ref, cnt, dsp, MPI_INTEGER, comm, ierr)
    rb = 0
    do i = 1, np
      rb(dsp(i) + 1:dsp(i) + n) = sb(dsp(i) + 1:dsp(i) + n)
    end do
    if (ip) then
      if (mode == 0) call MPI_Ialltoallv(MPI_IN_PLACE, cnt, dsp, MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Alltoallv)(MPI_IN_PLACE, cnt, dsp, MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, info, &
        req, ierr)
    else
      if (mode == 0) call MPI_Ialltoallv(sb, cnt, dsp, MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, req, ierr)
      if (mode == 1) call PI(Alltoallv)(sb, cnt, dsp, MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, comm, info, req, ierr)
    end if
    call complete()
    call chk('alltoallv', rb, ref, (n + 1) * np)
  end subroutine

  ! alltoallw: as alltoallv, displacements in bytes, a type per rank.
  subroutine t_alltoallw()
    integer(kind=CK) :: cnt(np)
    integer(kind=AK) :: dsp(np)
    integer :: i
    HANDLE(MPI_Datatype) :: ty(np)
    integer :: sb((n + 1) * np), rb((n + 1) * np), ref((n + 1) * np)
    do i = 1, np
      cnt(i) = n
      dsp(i) = (i - 1) * (n + 1) * 4
      ty(i) = MPI_INTEGER
    end do
    call fill(sb, (n + 1) * np, 12)
    ref = 0
    call MPI_Alltoallw(sb, cnt, dsp, ty, ref, cnt, dsp, ty, comm, ierr)
    rb = 0
    do i = 1, np
      rb(dsp(i) / 4 + 1:dsp(i) / 4 + n) = sb(dsp(i) / 4 + 1:dsp(i) / 4 + n)
    end do
    if (ip) then
      if (mode == 0) call MPI_Ialltoallw(MPI_IN_PLACE, cnt, dsp, ty, rb, cnt, dsp, ty, comm, req, ierr)
      if (mode == 1) call PI(Alltoallw)(MPI_IN_PLACE, cnt, dsp, ty, rb, cnt, dsp, ty, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Ialltoallw(sb, cnt, dsp, ty, rb, cnt, dsp, ty, comm, req, ierr)
      if (mode == 1) call PI(Alltoallw)(sb, cnt, dsp, ty, rb, cnt, dsp, ty, comm, info, req, ierr)
    end if
    call complete()
    call chk('alltoallw', rb, ref, (n + 1) * np)
  end subroutine

  subroutine t_reduce_scatter()
    integer(kind=CK) :: cnt(np)
    integer :: sb(n * np), rb(n * np), ref(n)
    cnt = n
    call fill(sb, n * np, 13)
    call MPI_Reduce_scatter(sb, ref, cnt, MPI_INTEGER, MPI_SUM, comm, ierr)
    rb = sb
    if (ip) then
      if (mode == 0) call MPI_Ireduce_scatter(MPI_IN_PLACE, rb, cnt, MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Reduce_scatter)(MPI_IN_PLACE, rb, cnt, MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Ireduce_scatter(sb, rb, cnt, MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Reduce_scatter)(sb, rb, cnt, MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    end if
    call complete()
    call chk('reduce_scatter', rb(1:n), ref, n)
  end subroutine

  subroutine t_reduce_scatter_block()
    integer :: sb(n * np), rb(n * np), ref(n)
    call fill(sb, n * np, 14)
    call MPI_Reduce_scatter_block(sb, ref, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    rb = sb
    if (ip) then
      if (mode == 0) call MPI_Ireduce_scatter_block(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Reduce_scatter_block)(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Ireduce_scatter_block(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Reduce_scatter_block)(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    end if
    call complete()
    call chk('reduce_scatter_block', rb(1:n), ref, n)
  end subroutine

  ! scan and exscan with the Fortran user operation (not commutative).
  subroutine t_scan()
    integer :: sb(n), rb(n), ref(n)
    call fill(sb, n, 15)
    call MPI_Scan(sb, ref, n, MPI_INTEGER, uop, comm, ierr)
    rb = sb
    if (ip) then
      if (mode == 0) call MPI_Iscan(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, uop, comm, req, ierr)
      if (mode == 1) call PI(Scan)(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, uop, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Iscan(sb, rb, NC(n), MPI_INTEGER, uop, comm, req, ierr)
      if (mode == 1) call PI(Scan)(sb, rb, NC(n), MPI_INTEGER, uop, comm, info, req, ierr)
    end if
    call complete()
    call chk('scan (user op)', rb, ref, n)
  end subroutine

  subroutine t_exscan()
    integer :: sb(n), rb(n), ref(n)
    call fill(sb, n, 16)
    ref = 0
    call MPI_Exscan(sb, ref, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    rb = sb
    if (ip) then
      if (mode == 0) call MPI_Iexscan(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Exscan)(MPI_IN_PLACE, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    else
      if (mode == 0) call MPI_Iexscan(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, req, ierr)
      if (mode == 1) call PI(Exscan)(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, info, req, ierr)
    end if
    call complete()
    if (rank > 0) call chk('exscan', rb, ref, n)
  end subroutine

  ! The neighbourhood collectives on the chain (deg neighbours: 0 to 2).
  subroutine t_neighbors()
    integer :: sb(2 * n), rb(2 * n), ref(2 * n)
    integer(kind=CK) :: cnt(2)
    integer(kind=AK) :: dsp(2)
    integer(kind=MPI_ADDRESS_KIND) :: ad(2)
    HANDLE(MPI_Datatype) :: ty(2)
    cnt = n
    dsp = [0, n]
    ad = [0_MPI_ADDRESS_KIND, int(4 * n, MPI_ADDRESS_KIND)]
    ty = MPI_INTEGER
    call fill(sb, 2 * n, 17)

    ref = 0
    call MPI_Neighbor_allgather(sb, n, MPI_INTEGER, ref, n, MPI_INTEGER, cart, ierr)
    rb = 0
    if (mode == 0) call MPI_Ineighbor_allgather(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, cart, req, ierr)
    if (mode == 1) call PI(Neighbor_allgather)(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, cart, info, req, ierr)
    call complete()
    call chk('neighbor_allgather', rb(1:deg * n), ref(1:deg * n), deg * n)

    ref = 0
    call MPI_Neighbor_allgatherv(sb, NC(n), MPI_INTEGER, ref, cnt, dsp, MPI_INTEGER, cart, ierr)
    rb = 0
    if (mode == 0) call MPI_Ineighbor_allgatherv(sb, NC(n), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, cart, req, ierr)
    if (mode == 1) call PI(Neighbor_allgatherv)(sb, NC(n), MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, cart, info, req, ierr)
    call complete()
    call chk('neighbor_allgatherv', rb(1:deg * n), ref(1:deg * n), deg * n)

    ref = 0
    call MPI_Neighbor_alltoall(sb, n, MPI_INTEGER, ref, n, MPI_INTEGER, cart, ierr)
    rb = 0
    if (mode == 0) call MPI_Ineighbor_alltoall(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, cart, req, ierr)
    if (mode == 1) call PI(Neighbor_alltoall)(sb, NC(n), MPI_INTEGER, rb, NC(n), MPI_INTEGER, cart, info, req, ierr)
    call complete()
    call chk('neighbor_alltoall', rb(1:deg * n), ref(1:deg * n), deg * n)

    ref = 0
    call MPI_Neighbor_alltoallv(sb, cnt, dsp, MPI_INTEGER, ref, cnt, dsp, MPI_INTEGER, cart, ierr)
    rb = 0
    if (mode == 0) call MPI_Ineighbor_alltoallv(sb, cnt, dsp, MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, cart, req, ierr)
    if (mode == 1) call PI(Neighbor_alltoallv)(sb, cnt, dsp, MPI_INTEGER, rb, cnt, dsp, MPI_INTEGER, cart, info, &
      req, ierr)
    call complete()
    call chk('neighbor_alltoallv', rb(1:deg * n), ref(1:deg * n), deg * n)

    ref = 0
    call MPI_Neighbor_alltoallw(sb, cnt, ad, ty, ref, cnt, ad, ty, cart, ierr)
    rb = 0
    if (mode == 0) call MPI_Ineighbor_alltoallw(sb, cnt, ad, ty, rb, cnt, ad, ty, cart, req, ierr)
    if (mode == 1) call PI(Neighbor_alltoallw)(sb, cnt, ad, ty, rb, cnt, ad, ty, cart, info, req, ierr)
    call complete()
    call chk('neighbor_alltoallw', rb(1:deg * n), ref(1:deg * n), deg * n)
  end subroutine

  ! A collective and point-to-point requests in one MPI_Waitall, with
  ! statuses: the receive's status says its source and tag.
  subroutine t_mixed()
    integer :: sb(n), rb(n), ref(n), tok, got, right, left
    HANDLE(MPI_Request) :: rs(3)
#ifdef BIND_F08
    type(MPI_Status) :: sts(3)
#else
    integer :: sts(MPI_STATUS_SIZE, 3)
#endif
    right = mod(rank + 1, np)
    left = mod(rank + np - 1, np)
    call fill(sb, n, 18)
    call MPI_Allreduce(sb, ref, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    tok = 100 + rank
    got = -1
    call MPI_Iallreduce(sb, rb, NC(n), MPI_INTEGER, MPI_SUM, comm, rs(1), ierr)
    nissued = nissued + 1
    call MPI_Irecv(got, NC(1), MPI_INTEGER, left, 7, comm, rs(2), ierr)
    call MPI_Isend(tok, NC(1), MPI_INTEGER, right, 7, comm, rs(3), ierr)
    call MPI_Waitall(3, rs, sts, ierr)
    call chk('mixed iallreduce', rb, ref, n)
    call expect('mixed token', got == 100 + left)
#ifdef BIND_F08
    call expect('mixed status', sts(2)%MPI_SOURCE == left .and. sts(2)%MPI_TAG == 7)
#else
    call expect('mixed status', sts(MPI_SOURCE, 2) == left .and. sts(MPI_TAG, 2) == 7)
#endif
    call expect('mixed requests freed', all(rs == MPI_REQUEST_NULL))
  end subroutine

  ! Fortran datatypes with MPI_Iallreduce / MPI_Allreduce_init.
  subroutine t_types()
    double precision :: d(n), dr(n), dref(n)
    real :: r(n), rr(n), rref(n)
    logical :: l(n), lr(n), lref(n)
    complex(kind(0d0)) :: z(n), zr(n), zref(n)
    integer(kind=8) :: i8(n), i8r(n), i8ref(n)
    integer :: p(2, n), pr(2, n), pref(2, n), i
    complex :: c(n), cr(n), cref(n)
    real(kind=8) :: r8(n), r8r(n), r8ref(n)
    double precision :: q(2, n), qr(2, n), qref(2, n)
    do i = 1, n
      d(i) = rank + 0.25d0 * i
      r(i) = real(rank * i)
      l(i) = mod(rank + i, 2) == 0
      z(i) = cmplx(rank, i, kind(0d0))
      i8(i) = int(rank, 8) * 10000000000_8 + i
      p(1, i) = mod(rank + i, 3)
      p(2, i) = rank
      c(i) = cmplx(i, rank)
      r8(i) = 0.5d0 * rank * i
      q(1, i) = dble(mod(rank * 7 + i, 4))
      q(2, i) = dble(rank)
    end do
    call MPI_Allreduce(d, dref, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(d, dr, NC(n), MPI_DOUBLE_PRECISION, MPI_SUM, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(d, dr, NC(n), MPI_DOUBLE_PRECISION, MPI_SUM, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_DOUBLE_PRECISION', all(dr == dref))
    call MPI_Allreduce(r, rref, n, MPI_REAL, MPI_MAX, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(r, rr, NC(n), MPI_REAL, MPI_MAX, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(r, rr, NC(n), MPI_REAL, MPI_MAX, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_REAL MPI_MAX', all(rr == rref))
    call MPI_Allreduce(l, lref, n, MPI_LOGICAL, MPI_LOR, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(l, lr, NC(n), MPI_LOGICAL, MPI_LOR, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(l, lr, NC(n), MPI_LOGICAL, MPI_LOR, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_LOGICAL MPI_LOR', all(lr .eqv. lref))
    call MPI_Allreduce(z, zref, n, MPI_DOUBLE_COMPLEX, MPI_SUM, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(z, zr, NC(n), MPI_DOUBLE_COMPLEX, MPI_SUM, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(z, zr, NC(n), MPI_DOUBLE_COMPLEX, MPI_SUM, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_DOUBLE_COMPLEX', all(zr == zref))
    call MPI_Allreduce(i8, i8ref, n, MPI_INTEGER8, MPI_SUM, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(i8, i8r, NC(n), MPI_INTEGER8, MPI_SUM, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(i8, i8r, NC(n), MPI_INTEGER8, MPI_SUM, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_INTEGER8', all(i8r == i8ref))
    call MPI_Allreduce(p, pref, n, MPI_2INTEGER, MPI_MINLOC, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(p, pr, NC(n), MPI_2INTEGER, MPI_MINLOC, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(p, pr, NC(n), MPI_2INTEGER, MPI_MINLOC, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_2INTEGER MPI_MINLOC', all(pr == pref))
    call MPI_Allreduce(l, lref, n, MPI_LOGICAL, MPI_LAND, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(l, lr, NC(n), MPI_LOGICAL, MPI_LAND, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(l, lr, NC(n), MPI_LOGICAL, MPI_LAND, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_LOGICAL MPI_LAND', all(lr .eqv. lref))
    call MPI_Allreduce(c, cref, n, MPI_COMPLEX, MPI_PROD, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(c, cr, NC(n), MPI_COMPLEX, MPI_PROD, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(c, cr, NC(n), MPI_COMPLEX, MPI_PROD, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_COMPLEX MPI_PROD', all(cr == cref))
    call MPI_Allreduce(r8, r8ref, n, MPI_REAL8, MPI_MIN, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(r8, r8r, NC(n), MPI_REAL8, MPI_MIN, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(r8, r8r, NC(n), MPI_REAL8, MPI_MIN, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_REAL8 MPI_MIN', all(r8r == r8ref))
    call MPI_Allreduce(q, qref, n, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, comm, ierr)
    if (mode == 0) call MPI_Iallreduce(q, qr, NC(n), MPI_2DOUBLE_PRECISION, MPI_MAXLOC, comm, req, ierr)
    if (mode == 1) call PI(Allreduce)(q, qr, NC(n), MPI_2DOUBLE_PRECISION, MPI_MAXLOC, comm, info, req, ierr)
    call complete()
    call expect('allreduce MPI_2DOUBLE_PRECISION MPI_MAXLOC', all(qr == qref))
  end subroutine
end program
