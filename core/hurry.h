/* Whether the loop owes an action now (a limit's verdict, a stop signal)
 * while it is busy in one call.  Long work on the loop — a big synthetic
 * file, a copy-up — asks between its steps and gives up when it is told to
 * hurry.  The watchdog (interposer/watchdog.c) sets it; the loop clears it
 * whenever it goes back to waiting. */
#ifndef MOAT_HURRY_H
#define MOAT_HURRY_H

#include <stdbool.h>

bool hurry_now(void);
void hurry_set(bool on);

#endif
