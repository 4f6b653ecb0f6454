/* launcher.c: run an application under the injection library and turn the
 * records it leaves into a profile.
 *
 * The run directory is private (mkdtemp: mode 0700, unique name under
 * $TMPDIR) and removed afterwards.  Each process of the application (children
 * inherit CUDA_INJECTION64_PATH) appends its records (protocol.h) to
 * <dir>/<pid>.rec; records.c reads them. */
#include "collect.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ga_build.h"
#include "progress.h"
#include "protocol.h"
#include "records.h"

char *ga_find_program(const char *prog, ga_error *err)
{
	const char *path;
	char *copy, *save = NULL, *dir;

	if (!prog || !*prog) {
		ga_fail(err, GA_ERR_USAGE, "no program given");
		return NULL;
	}
	if (strchr(prog, '/')) {
		struct stat st;
		if (stat(prog, &st) != 0) {
			ga_fail(err, GA_ERR_NOT_FOUND, "%s: program not found", prog);
			return NULL;
		}
		if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0) {
			ga_fail(err, GA_ERR_NOT_FOUND, "%s: not an executable file", prog);
			return NULL;
		}
		return ga_xstrdup(prog);
	}
	path = getenv("PATH");
	copy = ga_xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *full = ga_xasprintf("%s/%s", *dir ? dir : ".", prog);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0) {
			free(copy);
			return full;
		}
		free(full);
	}
	free(copy);
	ga_fail(err, GA_ERR_NOT_FOUND, "%s: program not found in PATH", prog);
	return NULL;
}

/* The driver library loads (RTLD_LAZY: milliseconds).  The program is run
 * without a cuInit here first: that took 0.1 s on an H200, paid by every
 * profiled run.  When no launch was profiled, ga_collect_live asks
 * ga_probe_gpu whether the GPU is the reason. */
static void *open_driver(ga_error *err)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		ga_fail(err, GA_ERR_NO_GPU,
		        "no NVIDIA GPU driver found (libcuda.so.1 cannot be loaded), so kernels "
		        "cannot be profiled on this machine.\n"
		        "  To analyse a profile recorded elsewhere: gpuadvise --import FILE.json\n"
		        "  To see what gpuadvise reports: gpuadvise --demo matmul (shows a recorded profile)");
	return h;
}

int ga_probe_gpu(ga_error *err)
{
	typedef int (*init_fn)(unsigned);
	typedef int (*count_fn)(int *);
	void *h = open_driver(err);
	int n = 0, rc;

	if (!h)
		return -1;
	init_fn cu_init = (init_fn)dlsym(h, "cuInit");
	count_fn cu_count = (count_fn)dlsym(h, "cuDeviceGetCount");
	if (!cu_init || !cu_count) {
		dlclose(h);
		return ga_fail(err, GA_ERR_NO_GPU, "libcuda.so.1 is not a usable CUDA driver");
	}
	rc = cu_init(0);
	if (rc == 0)
		rc = cu_count(&n);
	dlclose(h);
	if (rc != 0 || n <= 0) {
		const char *vis = getenv("CUDA_VISIBLE_DEVICES");
		return ga_fail(err, GA_ERR_NO_GPU,
		               "the CUDA driver sees no usable GPU (cuInit/cuDeviceGetCount error %d, "
		               "%d devices)%s%s%s", rc, n,
		               vis ? "; CUDA_VISIBLE_DEVICES is set to '" : "", vis ? vis : "",
		               vis ? "'" : "");
	}
	return 0;
}

static int launch_cmp(const void *a, const void *b)
{
	const ga_launch *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static void remove_run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (d) {
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char *f = ga_xasprintf("%s/%s", dir, e->d_name);
			unlink(f);
			free(f);
		}
		closedir(d);
	}
	rmdir(dir);
}

static char *iso_now(void)
{
	char buf[64];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return ga_xstrdup(buf);
}

static char *join_argv(char *const *argv)
{
	ga_buf b = {0};
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			ga_buf_putc(&b, ' ');
		ga_buf_puts(&b, argv[i]);
	}
	return ga_buf_take(&b);
}

/* How long the program may take to end after gpuadvise passed it a
 * signal, before its process group gets SIGKILL (gpuadvise(1), SIGNALS). */
#define KILL_GRACE_SECONDS 5.0

/* The terminal, when gpuadvise runs in its foreground: the program's group
 * gets it (it reads the terminal, and Ctrl-C and Ctrl-Z reach it as they
 * would without gpuadvise) and gives it back when it ends or stops. */
static int terminal_fd(void)
{
	return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp() ? STDIN_FILENO : -1;
}

static void give_terminal(int tty, pid_t pgid)
{
	struct sigaction ign = {0}, old;

	if (tty < 0)
		return;
	/* tcsetpgrp from a background group raises SIGTTOU: ignored here. */
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGTTOU, &ign, &old);
	tcsetpgrp(tty, pgid);
	sigaction(SIGTTOU, &old, NULL);
}

/* In the child, before exec: the settings for the injection library. */
static void child_env(const ga_live_opts *o, const char *dir, const char *metrics,
                      const char *stalls)
{
	char buf[64];

	setenv("CUDA_INJECTION64_PATH", o->inject_path, 1);
	setenv(GA_ENV_RUN_DIR, dir, 1);
	setenv(GA_ENV_METRICS, metrics, 1);
	snprintf(buf, sizeof(buf), "%ld", o->max_passes);
	setenv(GA_ENV_MAX_PASSES, buf, 1);
	setenv(GA_ENV_TOOL_VERSION, GA_VERSION, 1);
	if (o->kernel_filter)
		setenv(GA_ENV_KERNEL, o->kernel_filter, 1);
	snprintf(buf, sizeof(buf), "%ld", o->launch_skip);
	setenv(GA_ENV_LAUNCH_SKIP, buf, 1);
	snprintf(buf, sizeof(buf), "%ld", o->launch_count);
	setenv(GA_ENV_LAUNCH_COUNT, buf, 1);
	snprintf(buf, sizeof(buf), "%ld", o->max_per_kernel);
	setenv(GA_ENV_MAX_PER_KERNEL, buf, 1);
	snprintf(buf, sizeof(buf), "%g", o->min_share);
	setenv(GA_ENV_MIN_SHARE, buf, 1);
	setenv(GA_ENV_LOOP_REPLAY, o->no_loop_replay ? "0" : "1", 1);
	/* NVTX calls reach CUPTI only through an injection library of NVTX's
	 * own: ours, which hands them to CUPTI (nvtxcb.c). */
	if (!o->nvtx_off)
		setenv(GA_ENV_NVTX_INJECTION, o->inject_path, 1);
	if (o->keep_image && !stalls)
		setenv(GA_ENV_KEEP_IMAGE, o->keep_image, 1);
	if (o->source_mode)
		setenv(GA_ENV_SOURCE, o->source_mode, 1);
	/* Only the rules' trigger decides, not one the user's
	 * environment happens to hold. */
	if (o->source_when && *o->source_when)
		setenv(GA_ENV_SOURCE_WHEN, o->source_when, 1);
	else
		unsetenv(GA_ENV_SOURCE_WHEN);
	if (o->source_skip && *o->source_skip)
		setenv(GA_ENV_SOURCE_SKIP, o->source_skip, 1);
	else
		unsetenv(GA_ENV_SOURCE_SKIP);
	if (o->source_opcodes && *o->source_opcodes)
		setenv(GA_ENV_SOURCE_OPCODES, o->source_opcodes, 1);
	else
		unsetenv(GA_ENV_SOURCE_OPCODES);
	setenv(GA_ENV_NO_REPLAY, o->no_replay && *o->no_replay ? o->no_replay
	                                                       : GA_NO_REPLAY_DEFAULT, 1);
	snprintf(buf, sizeof(buf), "%ld", o->watchdog_s);
	setenv(GA_ENV_WATCHDOG, buf, 1);
	/* the stall run samples PCs, and nothing else */
	setenv(GA_ENV_TIMELINE, stalls || o->timeline == 0 ? "0" : o->timeline == 2 ? "only" : "1",
	       1);
	if (stalls)
		setenv(GA_ENV_STALLS, stalls, 1);
	else
		unsetenv(GA_ENV_STALLS);
}

/* In the child: its own process group (and the terminal), signals as
 * gpuadvise found them, and death with gpuadvise should that be killed
 * by SIGKILL, which leaves it no time to stop the program. */
static void child_start(const ga_live_opts *o, const char *prog, int tty, pid_t parent,
                        const struct sigaction *old_quit, int quiet, int exec_fd)
{
	static const int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
	struct sigaction dfl = {0}, cur;

	setpgid(0, 0);
	give_terminal(tty, getpid());
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < GA_ARRAY_LEN(reset); i++)
		if (sigaction(reset[i], NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
			sigaction(reset[i], &dfl, NULL);
	sigaction(SIGQUIT, old_quit, NULL);
	/* gpuadvise killed (SIGKILL): the program gets SIGTERM, which a
	 * launcher such as torchrun passes on to its ranks; SIGKILL here left
	 * the ranks running on their own. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(128 + SIGTERM);
	if (quiet) {
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0) {
			dup2(devnull, STDOUT_FILENO);
			close(devnull);
		}
	}
	execv(prog, o->argv);
	/* The reason goes to the parent, which words it (exec_failure). */
	int e = errno;
	if (exec_fd < 0 || write(exec_fd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		fprintf(stderr, "gpuadvise: cannot run %s: %s\n", prog, strerror(e));
	_exit(127);
}

/* execv(2) failed in the child with errno e.  ENOEXEC is a text file
 * marked executable but with no "#!" line: the shell would run it as a
 * script, execv(2) does not (and neither does a GPU job launcher). */
static int exec_failure(const char *prog, int e, ga_error *err)
{
	if (e == ENOEXEC)
		return ga_fail(err, GA_ERR_NOT_FOUND,
		               "%s is not a program the system can run (no '#!' line and not an "
		               "ELF executable): run it with its interpreter, e.g. gpuadvise sh %s",
		               prog, prog);
	return ga_fail(err, GA_ERR_NOT_FOUND, "cannot run %s: %s", prog, strerror(e));
}

/* The errno the child sent before _exit(127), or 0 when execv(2)
 * succeeded (close-on-exec closed the pipe unwritten). */
static int exec_errno(int fd)
{
	int e = 0;

	if (fd < 0 || read(fd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = 0;
	return e;
}

/* Ctrl-Z stopped the program: stop gpuadvise too, so that the shell sees
 * the job stop, and give the terminal back to the program on fg. */
static void follow_stop(pid_t child, int tty)
{
	give_terminal(tty, getpgrp());
	kill(getpid(), SIGSTOP);
	give_terminal(tty, child);
	kill(-child, SIGCONT);
}

/* Whether the program's group is empty, once its leader is reaped: its
 * other processes are gpuadvise's children (PR_SET_CHILD_SUBREAPER), or
 * were (reaped here; a zombie would still count for kill(2)). */
static int group_empty(pid_t pgid)
{
	pid_t r;

	while ((r = waitpid(-pgid, NULL, WNOHANG)) > 0)
		;
	return r < 0 && errno == ECHILD;
}

/* The program's processes left once its first one is gone: its group, and
 * the orphans gpuadvise now parents (PR_SET_CHILD_SUBREAPER), such as the
 * ranks of a torchrun killed with SIGKILL, which may run in sessions of
 * their own.  Sends sig to all of them. */
static void signal_rest(pid_t pgid, int sig)
{
	kill(-pgid, sig);
	kill(-pgid, SIGCONT);
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	while (d && (de = readdir(d)) != NULL) {
		char path[64], buf[512];
		long pid = strtol(de->d_name, NULL, 10);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		/* pid (comm) state ppid ...: comm may hold spaces and ')' */
		char *close = strrchr(buf, ')');
		char state;
		long ppid;
		if (close && sscanf(close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self) {
			kill((pid_t)pid, sig);
			kill((pid_t)pid, SIGCONT);
		}
	}
	if (d)
		closedir(d);
}

/* No child of gpuadvise's is left (reaping those that ended), the
 * program's group included. */
static int all_gone(void)
{
	pid_t r;

	while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	return r < 0 && errno == ECHILD;
}

/* The progress line, every PROGRESS_SECONDS: \r and the line, \033[K
 * clearing what a longer one left; end: the line cleared, so that the
 * report starts on a clean line.  The program's own output on the same
 * terminal may break into it; the next update redraws it. */
static void show_progress(ga_progress *pr, int end)
{
	char line[160];

	if (!pr)
		return;
	if (end) {
		if (pr->shown)
			fputs("\r\033[K", stderr);
		pr->shown = 0;
		return;
	}
	if (ga_mono_seconds() < pr->next)
		return;
	pr->next = ga_mono_seconds() + PROGRESS_SECONDS;
	ga_progress_update(pr);
	ga_progress_format(pr, ga_mono_seconds() - pr->t0, line, sizeof(line));
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	pr->shown = 1;
}

/* Wait for the program, passing on a signal gpuadvise receives; an
 * interrupted program's whole group is waited for, SIGKILL after the
 * grace time.  pr: the progress line, or NULL. */
static void wait_program(pid_t child, int tty, int *status, struct rusage *ru, ga_progress *pr)
{
	double kill_at = 0;
	int passed = 0, killed = 0, leader_done = 0, orphans = 0;

	for (;;) {
		pid_t r = leader_done ? child : wait4(child, status, WNOHANG | WUNTRACED, ru);
		int sig = ga_signals_received();

		if (r == child && !leader_done && WIFSTOPPED(*status)) {
			/* stopped by a signal not from the terminal: wait on */
			if (tty >= 0 && !sig)
				follow_stop(child, tty);
			continue;
		}
		if (r < 0 && errno != EINTR) {
			*status = 0;
			break;
		}
		if (r == child) {
			leader_done = 1;
			/* The program's first process killed by a signal (a
			 * launcher such as torchrun, SIGKILLed): the rest of its
			 * group (the ranks) is stopped as on an interruption, and
			 * waited for, so that their records come in and nothing is
			 * left running. */
			if (WIFSIGNALED(*status) && !passed && !all_gone()) {
				orphans = 1;
				signal_rest(child, SIGTERM);
				passed = 1;
				kill_at = ga_mono_seconds() + KILL_GRACE_SECONDS;
			}
		}
		/* An interrupted group is waited for until it is empty, or
		 * for a little after SIGKILL (a process in the driver may take
		 * a moment to go). */
		if (leader_done && (!passed || (orphans ? all_gone() : group_empty(child)) ||
		                    (killed && ga_mono_seconds() > kill_at + 2)))
			break;
		if (sig && !passed) {
			kill(-child, sig);
			kill(-child, SIGCONT);
			passed = 1;
			kill_at = ga_mono_seconds() + KILL_GRACE_SECONDS;
		}
		if (passed && !killed && (ga_signals_hurry() || ga_mono_seconds() >= kill_at)) {
			if (orphans)
				signal_rest(child, SIGKILL);
			else
				kill(-child, SIGKILL);
			killed = 1;
		}
		struct pollfd pfd = {.fd = ga_signals_fd(), .events = POLLIN};
		poll(&pfd, 1, passed ? 50 : pr ? (int)(PROGRESS_SECONDS * 1000) : -1);
		ga_signals_drain();
		show_progress(pr, 0);
	}
	show_progress(pr, 1);
	ga_signals_set_group(0);
	give_terminal(tty, getpgrp());
}

static void close_pipe(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Run the program once under the injection library, records into dir;
 * stalls: the stall run's list of kernels (then the program's stdout goes
 * to /dev/null: the user has seen it once).  Fills the run part of res. */
static int run_program(const ga_live_opts *o, const char *prog, const char *dir,
                       const char *metrics, const char *stalls, ga_app_result *res, ga_error *err)
{
	struct sigaction ign = {0}, old_quit;
	struct rusage ru = {0};
	int status = 0, tty = terminal_fd(), exec_pipe[2], e;
	pid_t child, parent = getpid();
	double t0;

	/* Interrupted before (in the first run, or between the runs): the
	 * program is not started. */
	if ((res->interrupted = ga_signals_received()) != 0)
		return 0;
	/* The program's orphans come to gpuadvise, which can then wait for
	 * them after an interruption (prctl(2)). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGQUIT, &ign, &old_quit);
	/* How an execv(2) failure comes back: its errno through a pipe that
	 * a successful exec closes. */
	if (pipe2(exec_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		exec_pipe[0] = exec_pipe[1] = -1;
	t0 = ga_mono_seconds();
	ga_timing_mark("fork");
	fflush(NULL);
	child = fork();
	if (child < 0) {
		sigaction(SIGQUIT, &old_quit, NULL);
		close_pipe(exec_pipe);
		return ga_fail(err, GA_ERR_IO, "fork failed: %s", strerror(errno));
	}
	if (child == 0) {
		child_env(o, dir, metrics, stalls);
		child_start(o, prog, tty, parent, &old_quit, o->quiet_stdout || stalls, exec_pipe[1]);
	}
	if (exec_pipe[1] >= 0)
		close(exec_pipe[1]);
	exec_pipe[1] = -1;
	/* Also here: a signal may come before the child's own setpgid. */
	setpgid(child, child);
	ga_signals_set_group(child);
	ga_progress pr = {.dir = dir, .t0 = t0, .next = t0 + PROGRESS_SECONDS};
	wait_program(child, tty, &status, &ru, o->progress && !stalls ? &pr : NULL);
	ga_progress_free(&pr);
	ga_timing_mark("child_exit");
	res->peak_rss_kb = ru.ru_maxrss;
	res->wall_seconds = ga_mono_seconds() - t0;
	res->interrupted = ga_signals_received();
	sigaction(SIGQUIT, &old_quit, NULL);
	if (WIFEXITED(status)) {
		res->exited = 1;
		res->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
	}
	e = res->exited && res->exit_status == 127 ? exec_errno(exec_pipe[0]) : 0;
	close_pipe(exec_pipe);
	if (!e)
		return 0;
	/* The program never ran: 127 is no status of its own. */
	res->exited = 0;
	res->exit_status = 0;
	return exec_failure(prog, e, err);
}

static char *make_run_dir(ga_error *err)
{
	const char *tmpdir = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/gpuadvise-run-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (mkdtemp(tmpl))
		return ga_xstrdup(tmpl);
	ga_fail(err, GA_ERR_IO, "cannot create a run directory under %s: %s",
	        tmpdir && *tmpdir ? tmpdir : "/tmp", strerror(errno));
	return NULL;
}

/* The stall run (--stalls): the program once more, PC sampling the first
 * launch of each kernel that got source lines, or with --source of every
 * profiled kernel (sass.c says why not in the first run).  Appends what
 * happened to note. */
static void stall_run(const ga_live_opts *o, const char *prog, const char *metrics,
                      ga_profile *p, ga_buf *note)
{
	ga_error err = {0};
	ga_app_result r2 = {0};
	ga_records g = {0};
	char *dir = NULL, *list = NULL;
	FILE *f;
	ga_map names = {0};           /* kernel -> its place in order */
	const char **order = NULL;
	double *sum = NULL, *cnt = NULL;
	size_t listed = 0, cap = 0;
	int all = o->source_mode && strcmp(o->source_mode, "force") == 0;
	size_t n_cand = all ? p->n_launches : p->n_sources;

	for (size_t i = 0; i < n_cand; i++) {
		const char *m = all ? p->launches[i].mangled : p->sources[i].mangled;
		if (m && !strchr(m, '\n') && !strchr(m, '\t') && ga_strmap_get(&names, m) < 0) {
			ga_strmap_put(&names, m, listed);
			GA_PUSH(order, listed, cap, m);
		}
	}
	if (listed == 0) {
		ga_buf_puts(note, "stall reasons: no kernel had source lines, so the program was not "
		            "run again (--source --stalls samples every profiled kernel). ");
		goto out;
	}
	if (!(dir = make_run_dir(&err))) {
		ga_buf_printf(note, "stall reasons: %s. ", err.msg);
		goto out;
	}
	list = ga_xasprintf("%s/stalls.list", dir);
	if (!(f = fopen(list, "w"))) {
		ga_buf_printf(note, "stall reasons: cannot write %s: %s. ", list, strerror(errno));
		goto out;
	}
	/* the first run's mean duration sizes the sampling period */
	sum = ga_xcalloc(listed, sizeof(*sum));
	cnt = ga_xcalloc(listed, sizeof(*cnt));
	for (size_t j = 0; j < p->n_launches; j++) {
		long k = p->launches[j].mangled ? ga_strmap_get(&names, p->launches[j].mangled) : -1;
		if (k >= 0 && isfinite(p->launches[j].duration_ns)) {
			sum[k] += p->launches[j].duration_ns;
			cnt[k]++;
		}
	}
	for (size_t k = 0; k < listed; k++)
		fprintf(f, "%.0f\t%s\n", cnt[k] > 0 ? sum[k] / cnt[k] : 0.0, order[k]);
	fclose(f);
	if (run_program(o, prog, dir, metrics, list, &r2, &err) != 0) {
		ga_buf_printf(note, "stall reasons: %s. ", err.msg);
		goto out;
	}
	g.stall_pass = 1;
	ga_records_read_dir(dir, p, &g);
	ga_buf_printf(note, "stall reasons: the program ran a second time under PC sampling "
	              "(%.1f s); %d of %zu kernel(s) sampled", r2.wall_seconds, g.stall_records,
	              listed);
	if (r2.signal)
		ga_buf_printf(note, "; that run was killed by signal %d", r2.signal);
	else if (r2.exited && r2.exit_status)
		ga_buf_printf(note, "; that run exited with status %d", r2.exit_status);
	if (g.source_notes)
		ga_buf_printf(note, "; %s%s", g.source_msg, g.source_notes > 1 ? " (and more)" : "");
	else if (g.first_error)
		ga_buf_printf(note, "; %s", g.first_error);
	ga_buf_puts(note, ". ");
out:
	if (dir)
		remove_run_dir(dir);
	free(dir);
	free(list);
	free(order);
	free(sum);
	free(cnt);
	ga_map_free(&names);
	ga_records_free(&g);
}

/* The collection part of the profile: when, where, what ran and how. */
static void fill_collection(const ga_live_opts *o, const ga_app_result *res, ga_profile *p)
{
	char host[256] = "";

	free(p->collection.date);
	p->collection.date = iso_now();
	free(p->collection.mode);
	p->collection.mode = ga_xstrdup("live");
	free(p->collection.command);
	p->collection.command = join_argv(o->argv);
	free(p->collection.tool_version);
	p->collection.tool_version = ga_xstrdup(GA_VERSION);
	gethostname(host, sizeof(host) - 1);
	free(p->collection.host);
	p->collection.host = ga_xstrdup(host);
	p->collection.wall_seconds = res->wall_seconds;
	p->collection.min_share_pct = o->min_share;
	p->collection.quick = o->quick;
	p->collection.app_status = res->exited ? res->exit_status : -1;
	p->collection.app_signal = res->signal;
	p->collection.app_peak_rss_kb = res->peak_rss_kb;
}

/* The profile's collection note: how the program ended, what the records
 * said, what the stall run did. */
static void fill_note(const ga_app_result *res, const ga_records *g, const ga_buf *stall_note,
                      ga_profile *p)
{
	ga_buf note = {0};

	/* "Reported" only when there is something to report. */
	const char *before = p->n_launches ? "; kernels profiled before that are reported" : "";

	if (res->interrupted) {
		p->collection.incomplete = 1;
		ga_buf_printf(&note, "gpuadvise was interrupted by signal %d (%s) and stopped the "
		              "application%s. ", res->interrupted, strsignal(res->interrupted),
		              before);
	} else if (res->signal) {
		p->collection.incomplete = 1;
		ga_buf_printf(&note, "the application was killed by signal %d (%s)%s. ",
		              res->signal, strsignal(res->signal), before);
	} else if (res->exited && res->exit_status != 0) {
		p->collection.incomplete = 1;
		ga_buf_printf(&note, "the application exited with status %d%s. ",
		              res->exit_status, before);
	}
	ga_records_note_run(g, &note);
	if (stall_note->len)
		ga_buf_puts(&note, stall_note->s);
	ga_records_note_data(g, &note);
	if (note.len) {
		note.s[note.len - 1] = '\0';
		free(p->collection.note);
		p->collection.note = ga_buf_take(&note);
	}
	ga_buf_free(&note);
}

/* No usable GPU, and the program failed on its own: say both, since the
 * failure may be the program's and not the GPU's. */
static void no_gpu_and_failure(const ga_app_result *res, ga_error *err)
{
	char what[128] = "";

	if (res->signal)
		snprintf(what, sizeof(what), "was killed by signal %d (%s)", res->signal,
		         strsignal(res->signal));
	else if (res->exited && res->exit_status != 0)
		snprintf(what, sizeof(what), "exited with status %d", res->exit_status);
	if (*what) {
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof(err->msg) - n, "; the program %s", what);
	}
}

/* The metric list for GA_ENV_METRICS: ',' within a bundle, ';' between. */
static char *metrics_arg(const ga_live_opts *o)
{
	ga_buf mb = {0};

	for (size_t i = 0; i < o->n_metrics; i++) {
		if (i)
			ga_buf_putc(&mb, o->bundles && o->bundles[i] != o->bundles[i - 1] ? ';' : ',');
		ga_buf_puts(&mb, o->metrics[i]);
	}
	return ga_buf_take(&mb);
}

int ga_collect_live(const ga_live_opts *o, ga_profile *p, ga_app_result *res, ga_error *err)
{
	char *dir = NULL, *prog = NULL, *metrics = NULL;
	ga_buf stall_note = {0};
	ga_records g = {0};
	int rc = -1;

	memset(res, 0, sizeof(*res));
	/* From here on a signal ends the run in order (signals.c). */
	if (ga_signals_install() != 0) {
		ga_fail(err, GA_ERR_IO, "cannot make a pipe: %s", strerror(errno));
		goto out;
	}
	prog = ga_find_program(o->argv[0], err);
	if (!prog)
		goto out;
	{
		void *h = open_driver(err);
		if (!h)
			goto out;
		dlclose(h);
	}
	if (access(o->inject_path, R_OK) != 0) {
		ga_fail(err, GA_ERR_PROFILING, "injection library %s is missing: %s (reinstall gpuadvise "
		        "or set GPUADVISE_INJECT)", o->inject_path, strerror(errno));
		goto out;
	}
	if (!(dir = make_run_dir(err)))
		goto out;
	metrics = metrics_arg(o);
	for (size_t i = 0; i < o->n_metrics; i++)
		ga_profile_add_metric(p, o->metrics[i]);

	if (run_program(o, prog, dir, metrics, NULL, res, err) != 0)
		goto out;

	/* Gather every process's records. */
	ga_records_read_dir(dir, p, &g);
	res->launched = g.n_processes > 0 || !(res->exited && res->exit_status == 127);
	res->cuda_processes = g.n_processes;
	res->watchdog = g.watchdog;
	/* Nothing profiled: a driver without a usable GPU says so here (the
	 * program's own CUDA calls failed first). */
	if (p->n_launches == 0 && res->launched && !res->interrupted && ga_probe_gpu(err) != 0) {
		no_gpu_and_failure(res, err);
		goto out;
	}
	/* qsort(NULL, 0, ...) is undefined behaviour (C11 7.22.5): no launch,
	 * no sort. */
	if (p->n_launches > 1)
		qsort(p->launches, p->n_launches, sizeof(*p->launches), launch_cmp);
	if (o->stalls && !ga_signals_received() && g.n_processes > 0 && !g.permission && !g.another_profiler &&
	    !g.unsupported && !g.counters_busy)
		stall_run(o, prog, metrics, p, &stall_note);
	/* Source text of every measured line, read now while the files are
	 * at hand, so that --import shows it on any machine. */
	for (size_t i = 0; i < p->n_sources; i++)
		ga_source_fill_text(&p->sources[i]);
	fill_collection(o, res, p);
	fill_note(res, &g, &stall_note, p);
	if (ga_records_failure(&g, p, err) != 0)
		goto out;
	if (res->exited && res->exit_status == 127 && g.n_processes == 0) {
		ga_fail(err, GA_ERR_NOT_FOUND, "%s could not be started", prog);
		goto out;
	}
	rc = 0;
out:
	if (dir)
		remove_run_dir(dir);
	free(dir);
	free(prog);
	free(metrics);
	ga_records_free(&g);
	ga_buf_free(&stall_note);
	return rc;
}
