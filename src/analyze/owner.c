/* owner.c: whose kernel it is, from the owners of the rule set
 * (rules/owners.yaml).  The first owner, in file order, with a pattern
 * that matches the kernel owns it:
 *   - a glob (fnmatch(3), no flags) matches the demangled name without its
 *     leading "void " or the mangled name, whole;
 *   - a regex (POSIX extended) matches anywhere in either name;
 *   - a module glob matches the module the kernel was loaded from, where
 *     the profile records one.
 * A kernel no pattern matches is the default owner's ("user"); without an
 * owners file every kernel is, and it is editable. */
#include "analyze.h"

#include <fnmatch.h>
#include <regex.h>
#include <string.h>

#include "../util.h"

static const ga_owner builtin_user = {
	.name = GA_OWNER_DEFAULT, .display = "user code", .editable = 1,
};

static int pattern_matches(const ga_owner_pattern *pt, const char *const names[2],
                           const char *module)
{
	switch (pt->how) {
	case GA_OWNER_MODULE:
		return module && fnmatch(pt->pattern, module, 0) == 0;
	case GA_OWNER_GLOB:
		for (int i = 0; i < 2; i++)
			if (names[i] && fnmatch(pt->pattern, names[i], 0) == 0)
				return 1;
		return 0;
	case GA_OWNER_REGEX:
		for (int i = 0; i < 2; i++)
			if (names[i] && regexec(pt->regex, names[i], 0, NULL, 0) == 0)
				return 1;
		return 0;
	}
	return 0;
}

const ga_owner *ga_owner_of(const ga_ruleset *rs, const char *name, const char *mangled,
                            const char *module, const char **kind)
{
	const char *names[2] = { name, mangled };
	const ga_owner *fallback;

	if (name && ga_str_has_prefix(name, "void "))
		names[0] = name + strlen("void ");
	if (kind)
		*kind = NULL;
	for (size_t i = 0; rs && i < rs->n_owners; i++) {
		const ga_owner *o = &rs->owners[i];
		for (size_t k = 0; k < o->n_patterns; k++) {
			if (!pattern_matches(&o->patterns[k], names, module))
				continue;
			if (kind)
				*kind = o->patterns[k].kind;
			return o;
		}
	}
	fallback = rs ? ga_ruleset_owner(rs, GA_OWNER_DEFAULT) : NULL;
	return fallback ? fallback : &builtin_user;
}
