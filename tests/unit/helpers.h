/* helpers.h: set-up shared by the unit tests (each is one C file; include
 * after <cmocka.h> and the project headers). */
#ifndef GA_TEST_HELPERS_H
#define GA_TEST_HELPERS_H

/* Load and validate the rules of dir into rs, or fail the test with the
 * diagnostics printed. */
static void load_rules(ga_ruleset *rs, const char *dir)
{
	ga_diags d = {0};

	ga_ruleset_init(rs);
	ga_rules_load_dir(rs, dir, &d);
	if (d.n == 0)
		ga_ruleset_validate(rs, &d);
	if (d.n) {
		ga_diags_print(&d, stderr);
		ga_diags_free(&d);
		fail_msg("rules in %s do not load", dir);
	}
	ga_diags_free(&d);
}

#endif
