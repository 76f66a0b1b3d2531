/* The loop's "an action is due" flag (hurry.h). */
#include "core/hurry.h"

#include <stdatomic.h>

static _Atomic bool hurry;

bool hurry_now(void)
{
	return atomic_load_explicit(&hurry, memory_order_relaxed);
}

void hurry_set(bool on)
{
	atomic_store_explicit(&hurry, on, memory_order_relaxed);
}
