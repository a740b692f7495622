/* rankquiet.h - under mpirun, the ranks above 0 keep quiet while options are parsed (every rank would say the same). */
#ifndef FK_RANKQUIET_H
#define FK_RANKQUIET_H

/* With on set, in a process that mpirun started as a rank above 0
 * (OMPI_COMM_WORLD_RANK, PMIX_RANK), stderr goes to /dev/null, so that an
 * option error, the same on every rank, is said once (by rank 0); off
 * restores stderr. Nothing happens outside mpirun. */
void prog_rank_quiet(int on);

#endif
