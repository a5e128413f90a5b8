! SPDX-License-Identifier: BSD-3-Clause
! exchange.F90 - a plain Fortran MPI program (no coltune in it) calling
! MPI_ALLTOALLV, MPI_ALLTOALL (also with MPI_IN_PLACE) on MPI_COMM_WORLD and
! MPI_ALLGATHER / MPI_ALLGATHERV, MPI_IALLGATHER / MPI_IALLGATHERV (completed
! by MPI_WAIT) and the persistent MPI_ALLGATHER_INIT (Open MPI:
! MPIX_ALLGATHER_INIT, -DPCOLL_MPIX) on an intercommunicator (even and odd
! world ranks), MPI_NEIGHBOR_ALLTOALLV and MPI_NEIGHBOR_ALLTOALL on a
! directed ring (a distributed graph), and their nonblocking (MPI_INEIGHBOR_*,
! completed by MPI_WAIT) and persistent forms (MPI_NEIGHBOR_ALLTOALL(V)_INIT,
! Open MPI: MPIX_), with MPI_INTEGER and a derived type
! (a strided vector), checking every result against values it computes
! itself. One source, three
! bindings, chosen when compiling with -cpp:
!   -DB_MPIFH  include 'mpif.h'    -DB_USEMPI  use mpi    -DB_F08  use mpi_f08
! Rank 0 prints how many calls of each collective it made (the test compares
! them with coltune's statistics: every call served once, none twice); every
! rank prints "exchange: ok" or the first wrong value, and a failure exits 1.
program exchange
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
#define ALLGATHER_INIT MPIX_ALLGATHER_INIT
#define NEIGHBOR_ALLTOALLV_INIT MPIX_NEIGHBOR_ALLTOALLV_INIT
#define NEIGHBOR_ALLTOALL_INIT MPIX_NEIGHBOR_ALLTOALL_INIT
#else
#define ALLGATHER_INIT MPI_ALLGATHER_INIT
#define NEIGHBOR_ALLTOALLV_INIT MPI_NEIGHBOR_ALLTOALLV_INIT
#define NEIGHBOR_ALLTOALL_INIT MPI_NEIGHBOR_ALLTOALL_INIT
#endif
#if defined(B_F08)
#define COMM_T type(MPI_Comm)
#define TYPE_T type(MPI_Datatype)
#define REQ_T type(MPI_Request)
#else
#define COMM_T integer
#define TYPE_T integer
#define REQ_T integer
#endif
  integer :: ierr, me, np, i, k, n, nbad, color, lme, lnp, rnp
  integer :: ncalls(10), nstarts(10), nsrc(1), ndst(1), wts(1)
  REQ_T :: req
  integer, allocatable :: sb(:), rb(:), sc(:), sd(:), rc(:), rd(:)
  TYPE_T :: vec, bad
  integer :: eclass, ierr2
  COMM_T :: local, inter, ring

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  allocate(sc(np), sd(np), rc(np), rd(np), sb(64*np + 64), rb(64*np + 64))
  nbad = 0
  ncalls = 0
  nstarts = 0 ! a persistent request's starts after its first: calls for coltune
  ! two integers out of every three: extent 3 integers, a hole inside
  call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)

  ! ---- MPI_ALLTOALLV, MPI_INTEGER: (me + i) mod 3 integers to rank i
  n = 0
  do i = 0, np - 1
    sc(i + 1) = mod(me + i, 3)
    sd(i + 1) = n
    do k = 1, sc(i + 1)
      sb(n + k) = val(me, i, k)
    end do
    n = n + sc(i + 1) + 1 ! a gap between blocks
  end do
  n = 0
  do i = np - 1, 0, -1 ! blocks in reverse rank order
    rc(i + 1) = mod(i + me, 3)
    rd(i + 1) = n
    n = n + rc(i + 1)
  end do
  rb = -1
  call MPI_ALLTOALLV(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call count_call(1)
  do i = 0, np - 1
    do k = 1, rc(i + 1)
      call expect(rb(rd(i + 1) + k), val(i, me, k), 'alltoallv integer')
    end do
  end do

  ! ---- MPI_ALLTOALLV, derived type out, MPI_INTEGER in: 1 vector = 2 integers
  do i = 0, np - 1
    sc(i + 1) = 1
    sd(i + 1) = np - 1 - i ! in elements of 3 integers
    sb(3 * (np - 1 - i) + 1) = val(me, i, 1)
    sb(3 * (np - 1 - i) + 3) = val(me, i, 2)
    rc(i + 1) = 2
    rd(i + 1) = 2 * i
  end do
  rb = -1
  call MPI_ALLTOALLV(sb, sc, sd, vec, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call count_call(1)
  do i = 0, np - 1
    call expect(rb(2 * i + 1), val(i, me, 1), 'alltoallv vector')
    call expect(rb(2 * i + 2), val(i, me, 2), 'alltoallv vector')
  end do

  ! ---- MPI_ALLTOALLV in place: symmetric counts 1 + mod(me + i, 2)
  n = 0
  do i = 0, np - 1
    rc(i + 1) = 1 + mod(me + i, 2)
    rd(i + 1) = n
    do k = 1, rc(i + 1)
      rb(n + k) = val(me, i, k)
    end do
    n = n + rc(i + 1)
  end do
  call MPI_ALLTOALLV(MPI_IN_PLACE, sc, sd, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call count_call(1)
  do i = 0, np - 1
    do k = 1, rc(i + 1)
      call expect(rb(rd(i + 1) + k), val(i, me, k), 'alltoallv in place')
    end do
  end do

  ! ---- MPI_ALLTOALL, MPI_INTEGER: 3 integers per rank
  do i = 0, np - 1
    do k = 1, 3
      sb(3 * i + k) = val(me, i, k)
    end do
  end do
  rb = -1
  call MPI_ALLTOALL(sb, 3, MPI_INTEGER, rb, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call count_call(2)
  do i = 0, np - 1
    do k = 1, 3
      call expect(rb(3 * i + k), val(i, me, k), 'alltoall integer')
    end do
  end do

  ! ---- MPI_ALLTOALL, one vector out (integers 1 and 3 of each 3), 2 integers in
  rb = -1
  call MPI_ALLTOALL(sb, 1, vec, rb, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call count_call(2)
  do i = 0, np - 1
    call expect(rb(2 * i + 1), val(i, me, 1), 'alltoall vector')
    call expect(rb(2 * i + 2), val(i, me, 3), 'alltoall vector')
  end do

  ! ---- MPI_ALLTOALL in place: 2 integers per rank
  do i = 0, np - 1
    rb(2 * i + 1) = val(me, i, 1)
    rb(2 * i + 2) = val(me, i, 2)
  end do
  call MPI_ALLTOALL(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call count_call(2)
  do i = 0, np - 1
    call expect(rb(2 * i + 1), val(i, me, 1), 'alltoall in place')
    call expect(rb(2 * i + 2), val(i, me, 2), 'alltoall in place')
  end do

#if defined(B_F08)
  ! ---- mpi_f08: ierror is optional
  rb = -1
  call MPI_Alltoall(sb, 3, MPI_INTEGER, rb, 3, MPI_INTEGER, MPI_COMM_WORLD)
  call count_call(2)
  do i = 0, np - 1
    call expect(rb(3 * i + 3), val(i, me, 3), 'alltoall without ierror')
  end do
#endif

  ! ---- the intercommunicator: even world ranks against odd ones
  color = mod(me, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, me, local, ierr)
  call MPI_Comm_rank(local, lme, ierr)
  call MPI_Comm_size(local, lnp, ierr)
  call MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 77, inter, ierr)
  call MPI_Comm_remote_size(inter, rnp, ierr)

  ! MPI_ALLGATHER, MPI_INTEGER: 2 integers from every remote rank
  sb(1) = val(me, 0, 1)
  sb(2) = val(me, 0, 2)
  rb = -1
  call MPI_ALLGATHER(sb, 2, MPI_INTEGER, rb, 2, MPI_INTEGER, inter, ierr)
  call count_call(3)
  do i = 0, rnp - 1
    call expect(rb(2 * i + 1), val(remote(i), 0, 1), 'allgather integer')
    call expect(rb(2 * i + 2), val(remote(i), 0, 2), 'allgather integer')
  end do

  ! MPI_ALLGATHER, one vector out, 2 integers in
  sb(1) = val(me, 1, 1)
  sb(3) = val(me, 1, 3)
  rb = -1
  call MPI_ALLGATHER(sb, 1, vec, rb, 2, MPI_INTEGER, inter, ierr)
  call count_call(3)
  do i = 0, rnp - 1
    call expect(rb(2 * i + 1), val(remote(i), 1, 1), 'allgather vector')
    call expect(rb(2 * i + 2), val(remote(i), 1, 3), 'allgather vector')
  end do

  ! MPI_ALLGATHERV, MPI_INTEGER: remote rank i sends 1 + mod(i, 3) integers,
  ! placed in reverse rank order
  do k = 1, 1 + mod(lme, 3)
    sb(k) = val(me, 2, k)
  end do
  n = 0
  do i = rnp - 1, 0, -1
    rc(i + 1) = 1 + mod(i, 3)
    rd(i + 1) = n
    n = n + rc(i + 1)
  end do
  rb = -1
  call MPI_ALLGATHERV(sb, 1 + mod(lme, 3), MPI_INTEGER, rb, rc, rd, MPI_INTEGER, inter, ierr)
  call count_call(4)
  do i = 0, rnp - 1
    do k = 1, rc(i + 1)
      call expect(rb(rd(i + 1) + k), val(remote(i), 2, k), 'allgatherv integer')
    end do
  end do

  ! MPI_ALLGATHERV, one vector out, 2 integers in
  sb(1) = val(me, 3, 1)
  sb(3) = val(me, 3, 3)
  do i = 0, rnp - 1
    rc(i + 1) = 2
    rd(i + 1) = 2 * i
  end do
  rb = -1
  call MPI_ALLGATHERV(sb, 1, vec, rb, rc, rd, MPI_INTEGER, inter, ierr)
  call count_call(4)
  do i = 0, rnp - 1
    call expect(rb(2 * i + 1), val(remote(i), 3, 1), 'allgatherv vector')
    call expect(rb(2 * i + 2), val(remote(i), 3, 3), 'allgatherv vector')
  end do

  ! MPI_IALLGATHER, MPI_INTEGER, then MPI_WAIT
  sb(1) = val(me, 4, 1)
  sb(2) = val(me, 4, 2)
  rb = -1
  call MPI_IALLGATHER(sb, 2, MPI_INTEGER, rb, 2, MPI_INTEGER, inter, req, ierr)
  call count_call(5)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_SUCCESS, 'wait of iallgather')
  do i = 0, rnp - 1
    call expect(rb(2 * i + 1), val(remote(i), 4, 1), 'iallgather integer')
    call expect(rb(2 * i + 2), val(remote(i), 4, 2), 'iallgather integer')
  end do

  ! MPI_IALLGATHERV, MPI_INTEGER: remote rank i sends 1 + mod(i, 3) integers,
  ! placed in reverse rank order; then MPI_WAIT
  do k = 1, 1 + mod(lme, 3)
    sb(k) = val(me, 5, k)
  end do
  n = 0
  do i = rnp - 1, 0, -1
    rc(i + 1) = 1 + mod(i, 3)
    rd(i + 1) = n
    n = n + rc(i + 1)
  end do
  rb = -1
  call MPI_IALLGATHERV(sb, 1 + mod(lme, 3), MPI_INTEGER, rb, rc, rd, MPI_INTEGER, inter, req, &
                       ierr)
  call count_call(6)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_SUCCESS, 'wait of iallgatherv')
  do i = 0, rnp - 1
    do k = 1, rc(i + 1)
      call expect(rb(rd(i + 1) + k), val(remote(i), 5, k), 'iallgatherv integer')
    end do
  end do

  ! The persistent MPI_ALLGATHER_INIT (-DPCOLL_MPIX: Open MPI 4.1's
  ! MPIX_ALLGATHER_INIT), started twice, each completed by MPI_WAIT, then
  ! freed: for the statistics two calls of iallgather where coltune serves
  ! them (a call a start, ncalls and nstarts), one where the library does
  sb(1) = val(me, 6, 1)
  sb(2) = val(me, 6, 2)
  call ALLGATHER_INIT(sb, 2, MPI_INTEGER, rb, 2, MPI_INTEGER, inter, MPI_INFO_NULL, req, ierr)
  call count_call(5)
  do k = 1, 2
    rb = -1
    call MPI_START(req, ierr)
    if (k > 1) nstarts(5) = nstarts(5) + 1
    call expect_class(ierr, MPI_SUCCESS, 'start of allgather_init')
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call expect_class(ierr, MPI_SUCCESS, 'wait of allgather_init')
    do i = 0, rnp - 1
      call expect(rb(2 * i + 1), val(remote(i), 6, 1), 'allgather_init integer')
      call expect(rb(2 * i + 2), val(remote(i), 6, 2), 'allgather_init integer')
    end do
  end do
  call MPI_REQUEST_FREE(req, ierr)
  call expect_class(ierr, MPI_SUCCESS, 'free of allgather_init')

  ! ---- invalid arguments get the MPI library's own error class, through
  ! the communicator's error handler (here MPI_ERRORS_RETURN)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN, ierr)
  call MPI_ALLTOALL(sb, -1, MPI_INTEGER, rb, -1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_COUNT, 'alltoall with a negative count')
  sc = -1
  call MPI_ALLTOALLV(sb, sc, sd, MPI_INTEGER, rb, sc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_COUNT, 'alltoallv with negative counts')
#if defined(B_F08)
  bad%MPI_VAL = 987654
#else
  bad = 987654
#endif
  call MPI_ALLTOALL(sb, 1, bad, rb, 1, bad, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_TYPE, 'alltoall with a bad datatype handle')
  call MPI_ALLGATHER(sb, 1, MPI_INTEGER, rb, -1, MPI_INTEGER, inter, ierr)
  call expect_class(ierr, MPI_ERR_COUNT, 'allgather with a negative count')

  ! ---- MPI_NEIGHBOR_ALLTOALLV and MPI_NEIGHBOR_ALLTOALL on a directed ring:
  ! each rank sends to the next one and receives from the one before
  nsrc(1) = mod(me - 1 + np, np)
  ndst(1) = mod(me + 1, np)
  wts(1) = 1
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, nsrc, wts, 1, ndst, wts, &
                                      MPI_INFO_NULL, .false., ring, ierr)
  sc(1) = 3
  sd(1) = 1
  rc(1) = 3
  rd(1) = 2
  do k = 1, 3
    sb(1 + k) = val(me, ndst(1), k)
  end do
  rb = -1
  call MPI_NEIGHBOR_ALLTOALLV(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, ring, ierr)
  call count_call(7)
  do k = 1, 3
    call expect(rb(2 + k), val(nsrc(1), me, k), 'neighbor_alltoallv integer')
  end do
  rb = -1
  call MPI_NEIGHBOR_ALLTOALL(sb(2), 2, MPI_INTEGER, rb, 2, MPI_INTEGER, ring, ierr)
  call count_call(8)
  do k = 1, 2
    call expect(rb(k), val(nsrc(1), me, k), 'neighbor_alltoall integer')
  end do

  ! Their nonblocking forms, completed by MPI_WAIT, and their persistent
  ! forms, started twice, each completed by MPI_WAIT, then freed (calls of
  ! ineighbor_alltoall(v) for the statistics, as the allgather init's)
  rb = -1
  call MPI_INEIGHBOR_ALLTOALLV(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, ring, req, ierr)
  call count_call(9)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_SUCCESS, 'wait of ineighbor_alltoallv')
  do k = 1, 3
    call expect(rb(2 + k), val(nsrc(1), me, k), 'ineighbor_alltoallv integer')
  end do
  rb = -1
  call MPI_INEIGHBOR_ALLTOALL(sb(2), 2, MPI_INTEGER, rb, 2, MPI_INTEGER, ring, req, ierr)
  call count_call(10)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call expect_class(ierr, MPI_SUCCESS, 'wait of ineighbor_alltoall')
  do k = 1, 2
    call expect(rb(k), val(nsrc(1), me, k), 'ineighbor_alltoall integer')
  end do
  call NEIGHBOR_ALLTOALLV_INIT(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, ring, &
                               MPI_INFO_NULL, req, ierr)
  call count_call(9)
  do i = 1, 2
    rb = -1
    call MPI_START(req, ierr)
    if (i > 1) nstarts(9) = nstarts(9) + 1
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call expect_class(ierr, MPI_SUCCESS, 'wait of neighbor_alltoallv_init')
    do k = 1, 3
      call expect(rb(2 + k), val(nsrc(1), me, k), 'neighbor_alltoallv_init integer')
    end do
  end do
  call MPI_REQUEST_FREE(req, ierr)
  call NEIGHBOR_ALLTOALL_INIT(sb(2), 2, MPI_INTEGER, rb, 2, MPI_INTEGER, ring, MPI_INFO_NULL, &
                              req, ierr)
  call count_call(10)
  do i = 1, 2
    rb = -1
    call MPI_START(req, ierr)
    if (i > 1) nstarts(10) = nstarts(10) + 1
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    call expect_class(ierr, MPI_SUCCESS, 'wait of neighbor_alltoall_init')
    do k = 1, 2
      call expect(rb(k), val(nsrc(1), me, k), 'neighbor_alltoall_init integer')
    end do
  end do
  call MPI_REQUEST_FREE(req, ierr)
  call MPI_Comm_free(ring, ierr)

  call MPI_Comm_free(inter, ierr)
  call MPI_Comm_free(local, ierr)
  call MPI_Type_free(vec, ierr)
  if (me == 0) write(*, '(a,10(1x,i0))') 'exchange: calls alltoallv alltoall allgather ' // &
                                         'allgatherv iallgather iallgatherv neighbor_alltoallv ' // &
                                         'neighbor_alltoall ineighbor_alltoallv ' // &
                                         'ineighbor_alltoall', ncalls
  if (me == 0) write(*, '(a,10(1x,i0))') 'exchange: later starts', nstarts
  if (nbad == 0) write(*, '(a)') 'exchange: ok'
  call MPI_Finalize(ierr)
  if (nbad /= 0) stop 1

contains

  ! The value rank src sends to rank dst at position k.
  integer function val(src, dst, k)
    integer, intent(in) :: src, dst, k
    val = 10000 * src + 100 * dst + k
  end function val

  ! World rank of rank i of the remote group (ranks of the other parity).
  integer function remote(i)
    integer, intent(in) :: i
    remote = 2 * i + 1 - color
  end function remote

  subroutine count_call(which)
    integer, intent(in) :: which
    if (ierr /= MPI_SUCCESS) then
      write(*, '(a,i0,a,i0)') 'exchange: rank ', me, ': ierror ', ierr
      nbad = nbad + 1
    end if
    ncalls(which) = ncalls(which) + 1
  end subroutine count_call

  subroutine expect_class(code, want, what)
    integer, intent(in) :: code, want
    character(len=*), intent(in) :: what
    call MPI_Error_class(code, eclass, ierr2)
    if (code == MPI_SUCCESS) eclass = MPI_SUCCESS
    call expect(eclass, want, what)
  end subroutine expect_class

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want .and. nbad < 5) write(*, '(a,i0,a,a,a,i0,a,i0)') 'exchange: rank ', me, &
        ': ', what, ': got ', got, ', want ', want
    if (got /= want) nbad = nbad + 1
  end subroutine expect
end program exchange
