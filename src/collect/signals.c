/* signals.c: SIGINT, SIGTERM and SIGHUP while gpuadvise profiles a program.
 *
 * The program runs in a process group of its own (launcher.c), so that
 * `kill -TERM`, `timeout` or a CI runner that signals gpuadvise alone does
 * not orphan it: gpuadvise passes the signal on to the whole group, waits a
 * bounded time, reports what was measured, removes its run directory and
 * exits 128 + the signal (gpuadvise(1), SIGNALS).
 *
 * The handler only records the signal and writes a byte to a self-pipe
 * (both async-signal-safe, as signal-safety(7) lists them); the launcher's
 * wait loop polls the pipe and does the work.  SIGCHLD writes a byte too,
 * so the loop also wakes when the program ends.  A second SIGINT sends
 * SIGKILL to the program's group from the handler itself (kill(2) is
 * async-signal-safe), for a user who does not want to wait. */
#include "collect.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t first_signal;   /* the first INT, TERM or HUP */
static volatile sig_atomic_t n_sigint;
static volatile sig_atomic_t child_group;    /* > 0 while the program runs */
static int pipe_fd[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig != SIGCHLD) {
		if (!first_signal)
			first_signal = sig;
		if (sig == SIGINT && ++n_sigint >= 2 && child_group > 0)
			kill(-child_group, SIGKILL);
	}
	/* A full pipe already wakes the loop. */
	if (write(pipe_fd[1], &c, 1) < 0) {
	}
	errno = saved;
}

static void handle(int sig)
{
	struct sigaction sa = {0}, old;

	/* A signal ignored when gpuadvise started (nohup, a background job
	 * of a non-interactive shell) stays ignored, for the program too. */
	if (sig != SIGCHLD && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
		return;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

int ga_signals_install(void)
{
	if (pipe_fd[0] >= 0)
		return 0;
	if (pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	handle(SIGINT);
	handle(SIGTERM);
	handle(SIGHUP);
	handle(SIGCHLD);
	return 0;
}

int ga_signals_fd(void)
{
	return pipe_fd[0];
}

void ga_signals_drain(void)
{
	char buf[64];

	while (pipe_fd[0] >= 0 && read(pipe_fd[0], buf, sizeof(buf)) > 0)
		;
}

void ga_signals_set_group(pid_t pgid)
{
	child_group = pgid;
}

int ga_signals_received(void)
{
	return first_signal;
}

int ga_signals_hurry(void)
{
	return n_sigint >= 2;
}
