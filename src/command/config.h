/* config.h: command-line options, parsed once by the commands' option
 * parsers (src/command/, composed in main.c), then read-only.  Also finds
 * gpuadvise's own files (rules, injection library, demo programs, recorded
 * profiles) relative to the executable, so the same binary works from the
 * build tree, from an install, or copied elsewhere. */
#ifndef GA_CONFIG_H
#define GA_CONFIG_H

#include <stddef.h>

typedef enum { GA_COLOR_AUTO, GA_COLOR_ALWAYS, GA_COLOR_NEVER } ga_color_mode;

typedef struct {
	/* what to do */
	char *const *app_argv;      /* PROGRAM ARGS..., or NULL */
	char **imports;             /* --import FILE (repeatable) */
	size_t n_imports;
	const char *demo;           /* --demo NAME|list|all */
	int list_rules;
	const char *explain;
	const char *check_rules;
	int list_metrics;
	const char *chip;           /* --chip, for --list-metrics offline */
	/* profiling */
	const char *kernel_filter;
	long launch_skip;
	long launch_count;          /* -1: all */
	long max_per_kernel;        /* 0: unlimited */
	long max_passes;            /* replay passes per launch; 0: unlimited */
	double min_share;           /* percent of GPU time for more than one profiled launch */
	int no_loop_replay;         /* --no-loop-replay */
	long watchdog;              /* --watchdog SEC; 0: none */
	int timeline;               /* 0 on (default), -1 --no-timeline, 1 --timeline-only */
	char **extra_metrics;
	size_t n_extra_metrics;
	const char *save_counter_data;
	/* rules */
	char **rule_dirs;           /* --rules DIR (repeatable), after the defaults */
	size_t n_rule_dirs;
	int no_default_rules;
	int quick;                  /* --quick: classifier metrics only, one pass */
	int source;                 /* --source 1, --no-source -1, default 0 (flagged kernels) */
	int stalls;                 /* --stalls: a second run with PC sampling */
	int quiet;                  /* --quiet: no progress line, no notes */
	/* output */
	const char *export_path;    /* -o */
	int force_overwrite;        /* -f: -o may replace an existing file */
	const char *format;         /* text | json | markdown */
	const char *log_file;
	int fail_on;                /* severity, or -1 */
	int verbose;
	int per_launch;
	int nvtx;                   /* --nvtx: 1 on, -1 off (not read at all), 0 auto */
	ga_color_mode color;
	int roofline;               /* 1 --roofline, -1 --no-roofline, 0 on a terminal */
	const char *source_root;    /* --source-root (SARIF uris), NULL: the current directory */
	/* comparison with a baseline */
	const char *baseline;       /* --baseline FILE */
	double regression_threshold;/* --regression-threshold, percent; < 0: not given (10) */
	int fail_on_regression;     /* --fail-on regression */
	int baseline_any_gpu;       /* --baseline-any-gpu: a baseline of another GPU is no error */
	int print_paths;            /* --print-paths (hidden): where the files were found */
} ga_config;

/* Directory holding the running executable (malloc'd). */
char *ga_exe_dir(void);
/* Default rules directory, injection library, demo program, recorded-profile
 * directory; malloc'd, or NULL when not found. */
char *ga_default_rules_dir(void);
char *ga_user_rules_dir(void);   /* $XDG_CONFIG_HOME/gpuadvise/rules if it exists */
char *ga_inject_path(void);
char *ga_demo_program(const char *demo);
char *ga_recorded_dir(void);

#endif
