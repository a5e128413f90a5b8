! SPDX-License-Identifier: BSD-3-Clause
! nonblocking.F90 - a plain Fortran MPI program (no coltune in it) calling
! MPI_IALLTOALLV and MPI_IALLTOALL on MPI_COMM_WORLD and completing each
! with one of the nine completion calls (MPI_WAIT, MPI_TEST,
! MPI_REQUEST_GET_STATUS, MPI_WAITALL, MPI_TESTALL, MPI_WAITANY, MPI_TESTANY,
! MPI_WAITSOME, MPI_TESTSOME), in an array {MPI_REQUEST_NULL, a ring
! MPI_IRECV, the collective, a ring MPI_ISEND}, checking the data, the ring
! receive's status, the indices, and that every request ends as
! MPI_REQUEST_NULL (NB_HOWS=n: the first n completion calls only); then the
! persistent MPI_ALLTOALLV_INIT (-DPCOLL_MPIX: Open MPI 4.1's
! MPIX_ALLTOALLV_INIT) started twice and freed. One source, three bindings
! (-cpp):
!   -DB_MPIFH  include 'mpif.h'    -DB_USEMPI  use mpi    -DB_F08  use mpi_f08
! Rank 0 prints how many calls of each collective it made (the test compares
! them with coltune's statistics); every rank prints "nonblocking: ok" or
! the first wrong value, and a failure exits 1.
program nonblocking
#if defined(B_USEMPI)
  use mpi
#elif defined(B_F08)
  use mpi_f08
#endif
  implicit none
#if defined(B_MPIFH)
  include 'mpif.h'
#endif
#if defined(PCOLL_MPIX)
#define ALLTOALLV_INIT MPIX_ALLTOALLV_INIT
#else
#define ALLTOALLV_INIT MPI_ALLTOALLV_INIT
#endif
#if defined(B_F08)
#define REQ_T type(MPI_Request)
#define STATUS_T type(MPI_Status)
#define STATUS_DIM
#define SOURCE_OF(s) s%MPI_SOURCE
#define TAG_OF(s) s%MPI_TAG
#define STATUSES_AT(s, k) s(k)
#else
#define REQ_T integer
#define STATUS_T integer
#define STATUS_DIM (MPI_STATUS_SIZE)
#define SOURCE_OF(s) s(MPI_SOURCE)
#define TAG_OF(s) s(MPI_TAG)
#define STATUSES_AT(s, k) s(:, k)
#endif
  integer, parameter :: NHOW = 9
  character(len=24), parameter :: names(NHOW) = [character(len=24) :: 'MPI_WAIT', 'MPI_TEST', &
      'MPI_REQUEST_GET_STATUS', 'MPI_WAITALL', 'MPI_TESTALL', 'MPI_WAITANY', 'MPI_TESTANY', &
      'MPI_WAITSOME', 'MPI_TESTSOME']
  integer :: ierr, me, np, i, k, n, nbad, how, idx, outcount, left, tag, last, length
  character(len=8) :: env
  integer :: ncalls(2), nstarts, indices(4)
  integer, allocatable :: sb(:), rb(:), sc(:), sd(:), rc(:), rd(:)
  integer :: ring_out, ring_in
  logical :: flag, alltoall
  REQ_T :: reqs(4), preq
  STATUS_T :: st STATUS_DIM
#if defined(B_F08)
  STATUS_T :: sts(4)
#else
  STATUS_T :: sts(MPI_STATUS_SIZE, 4)
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  allocate(sc(np), sd(np), rc(np), rd(np), sb(4*np + 4), rb(4*np + 4))
  nbad = 0
  ncalls = 0
  nstarts = 0 ! the persistent request's starts after its first: calls for coltune
  ! NB_HOWS=5: only the first five completion calls (MPICH 4.0.2's own Fortran
  ! MPI_WAITANY, MPI_TESTANY, MPI_WAITSOME and MPI_TESTSOME mistranslate
  ! indices, MPI_UNDEFINED among them, without coltune too)
  last = NHOW
  call get_environment_variable('NB_HOWS', env, length)
  if (length > 0) read(env, *) last
  do how = 1, last
    alltoall = mod(how, 3) == 2
    tag = 10 + how
    call start(how)
    select case (how)
    case (1) ! MPI_WAIT on the collective, then the ring
#if defined(B_F08)
      call MPI_Wait(reqs(3), st) ! ierror is optional in mpi_f08
#else
      call MPI_Wait(reqs(3), st, ierr)
#endif
      call check(ierr == MPI_SUCCESS, 'MPI_WAIT returned an error')
      call MPI_Waitall(4, reqs, sts, ierr)
      call check_ring(STATUSES_AT(sts, 2))
    case (2)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(reqs(3), flag, st, ierr)
      end do
      call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
    case (3)
      flag = .false.
      do while (.not. flag) ! (Open MPI 4.1.4's own binding spins with MPI_STATUS_IGNORE)
        call MPI_Request_get_status(reqs(3), flag, st, ierr)
      end do
      call MPI_Wait(reqs(3), MPI_STATUS_IGNORE, ierr)
      call MPI_Waitall(4, reqs, sts, ierr)
      call check_ring(STATUSES_AT(sts, 2))
    case (4)
      call MPI_Waitall(4, reqs, sts, ierr)
      call check_ring(STATUSES_AT(sts, 2))
    case (5)
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(4, reqs, flag, sts, ierr)
      end do
      call check_ring(STATUSES_AT(sts, 2))
    case (6, 7)
      left = 3
      do while (left > 0)
        flag = .false.
        if (how == 6) then
          call MPI_Waitany(4, reqs, idx, st, ierr)
          flag = .true.
        else
          call MPI_Testany(4, reqs, idx, flag, st, ierr)
        end if
        if (.not. flag) cycle
        call check(idx >= 2 .and. idx <= 4, 'an index outside 2..4')
        if (idx == 2) call check_ring(st)
        left = left - 1
      end do
      call MPI_Waitany(4, reqs, idx, st, ierr)
      call check(idx == MPI_UNDEFINED, 'no MPI_UNDEFINED once all are null')
    case (8, 9)
      left = 3
      do while (left > 0)
        if (how == 8) then
          call MPI_Waitsome(4, reqs, outcount, indices, sts, ierr)
        else
          call MPI_Testsome(4, reqs, outcount, indices, sts, ierr)
        end if
        call check(outcount /= MPI_UNDEFINED, 'MPI_UNDEFINED with requests left')
        if (outcount == MPI_UNDEFINED) exit
        do k = 1, outcount
          call check(indices(k) >= 2 .and. indices(k) <= 4, 'an index outside 2..4')
          if (indices(k) == 2) call check_ring(STATUSES_AT(sts, k))
        end do
        left = left - outcount
      end do
      call MPI_Waitsome(4, reqs, outcount, indices, sts, ierr)
      call check(outcount == MPI_UNDEFINED, 'no MPI_UNDEFINED once all are null')
    end select
    call check(ierr == MPI_SUCCESS, 'a completion call returned an error')
    do k = 1, 4
      call check(reqs(k) == MPI_REQUEST_NULL, 'a request not MPI_REQUEST_NULL')
    end do
    call check_data()
  end do

  ! The persistent form: made once, started twice, each completed by
  ! MPI_WAIT, then freed: for the statistics two calls of ialltoallv where
  ! coltune serves it (a call a start: ncalls and nstarts), one where the
  ! library does.
  how = 1
  alltoall = .false.
  call fill_v()
  call ALLTOALLV_INIT(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, preq, ierr)
  ncalls(1) = ncalls(1) + 1
  call check(ierr == MPI_SUCCESS, 'the persistent init returned an error')
  do idx = 1, 2
    rb = -1
    call MPI_Start(preq, ierr)
    if (idx > 1) nstarts = nstarts + 1
    call check(ierr == MPI_SUCCESS, 'MPI_START of the persistent request')
    call MPI_Wait(preq, MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. preq /= MPI_REQUEST_NULL, 'a persistent start')
    ring_in = val(mod(me - 1 + np, np), 0, 0) ! no ring here
    call check_data()
  end do
  call MPI_Request_free(preq, ierr)
  call check(preq == MPI_REQUEST_NULL, 'the freed persistent request not MPI_REQUEST_NULL')

  if (me == 0) write(*, '(a,2(1x,i0))') 'nonblocking: calls ialltoallv ialltoall', ncalls
  if (me == 0) write(*, '(a,1x,i0)') 'nonblocking: later starts', nstarts
  if (nbad == 0) write(*, '(a)') 'nonblocking: ok'
  call MPI_Finalize(ierr)
  if (nbad /= 0) stop 1

contains

  ! The value rank src sends to rank dst at position k in round how.
  integer function val(src, dst, k)
    integer, intent(in) :: src, dst, k
    val = 100000 * how + 1000 * src + 10 * dst + k
  end function val

  ! Starts round how: the ring's receive and send around the collective.
  subroutine start(how)
    integer, intent(in) :: how
    reqs(1) = MPI_REQUEST_NULL
    ring_out = val(me, 0, 0)
    ring_in = -1
    call MPI_Irecv(ring_in, 1, MPI_INTEGER, mod(me - 1 + np, np), tag, MPI_COMM_WORLD, &
                   reqs(2), ierr)
    rb = -1
    if (alltoall) then ! 2 integers per rank
      do i = 0, np - 1
        sb(2 * i + 1) = val(me, i, 1)
        sb(2 * i + 2) = val(me, i, 2)
      end do
      call MPI_Ialltoall(sb, 2, MPI_INTEGER, rb, 2, MPI_INTEGER, MPI_COMM_WORLD, reqs(3), ierr)
      ncalls(2) = ncalls(2) + 1
    else
      call fill_v()
      call MPI_Ialltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, &
                          reqs(3), ierr)
      ncalls(1) = ncalls(1) + 1
    end if
    call check(ierr == MPI_SUCCESS, 'the nonblocking collective returned an error')
    call MPI_Isend(ring_out, 1, MPI_INTEGER, mod(me + 1, np), tag, MPI_COMM_WORLD, reqs(4), &
                   ierr)
  end subroutine start

  ! The MPI_IALLTOALLV arguments of round how: mod(me + i + how, 3) integers
  ! to rank i, with a gap between blocks; received in reverse rank order.
  subroutine fill_v()
    n = 0
    do i = 0, np - 1
      sc(i + 1) = mod(me + i + how, 3)
      sd(i + 1) = n
      do k = 1, sc(i + 1)
        sb(n + k) = val(me, i, k)
      end do
      n = n + sc(i + 1) + 1
    end do
    n = 0
    do i = np - 1, 0, -1
      rc(i + 1) = mod(i + me + how, 3)
      rd(i + 1) = n
      n = n + rc(i + 1)
    end do
  end subroutine fill_v

  subroutine check_ring(s)
    STATUS_T, intent(in) :: s STATUS_DIM
    call check(SOURCE_OF(s) == mod(me - 1 + np, np), 'the ring receive''s MPI_SOURCE')
    call check(TAG_OF(s) == tag, 'the ring receive''s MPI_TAG')
  end subroutine check_ring

  subroutine check_data()
    call check(ring_in == val(mod(me - 1 + np, np), 0, 0), 'the ring''s value')
    do i = 0, np - 1
      if (alltoall) then
        call check(rb(2 * i + 1) == val(i, me, 1) .and. rb(2 * i + 2) == val(i, me, 2), &
                   'MPI_IALLTOALL data')
      else
        do k = 1, rc(i + 1)
          call check(rb(rd(i + 1) + k) == val(i, me, k), 'MPI_IALLTOALLV data')
        end do
      end if
    end do
  end subroutine check_data

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok .and. nbad < 5) write(*, '(a,i0,a,a,a,a)') 'nonblocking: rank ', me, &
        ': completed by ', trim(names(how)), ': ', what
    if (.not. ok) nbad = nbad + 1
  end subroutine check
end program nonblocking
