/* loopreplay.h: measuring a loop's launches across its iterations (see
 * loopreplay.c).  Called by the callbacks; calls the mechanisms. */
#ifndef GA_LOOPREPLAY_H
#define GA_LOOPREPLAY_H

#include "injstate.h"

/* A selected launch, profiling on: 1 when loop replay took it. */
int loop_launch(ga_inj *st, const ga_repeat_slot *rep, const CUpti_CallbackData *cb,
                const launch_args *a, int in_a_row);
/* GA_ENV_LOOP_LOG: a kernel's first launch, and what became of it. */
void loop_log_first(ga_inj *st, const ga_repeat_slot *rep);
/* EXIT of an iteration's last launch (PENDING_LOOP_PASS), or of one in a
 * user range (PENDING_LOOP_RANGE). */
void loop_exit_launch(ga_inj *st);
void loop_exit_range(ga_inj *st);
/* The context is going: a loop measured there ends (before ctx_release). */
void loop_context_gone(ga_inj *st, const ctx_state *cs);
/* A CUDA graph launched: inside a pass, the pass is broken. */
void loop_graph_launch(ga_inj *st, const CUpti_CallbackData *cb);

#endif
