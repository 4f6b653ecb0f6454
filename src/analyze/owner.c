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

#include "../util/util.h"

static const ga_owner builtin_user = {
	.name = GA_OWNER_DEFAULT, .display = "user code", .editable = 1,
};

static int pattern_matches(const ga_owner_pattern *pt, const char *name, const char *mangled,
                           const char *module)
{
	switch (pt->how) {
	case GA_OWNER_MODULE:
		return module && fnmatch(pt->pattern, module, 0) == 0;
	case GA_OWNER_GLOB:
		return ga_names_match(pt->pattern, NULL, name, mangled);
	case GA_OWNER_REGEX:
		return ga_names_match(NULL, pt->regex, name, mangled);
	}
	return 0;
}

const ga_owner *ga_owner_of(const ga_ruleset *rs, const char *name, const char *mangled,
                            const char *module, const char **kind)
{
	const ga_owner *fallback;

	if (kind)
		*kind = NULL;
	for (size_t i = 0; rs && i < rs->n_owners; i++) {
		const ga_owner *o = &rs->owners[i];
		for (size_t k = 0; k < o->n_patterns; k++) {
			if (!pattern_matches(&o->patterns[k], name, mangled, module))
				continue;
			if (kind)
				*kind = o->patterns[k].kind;
			return o;
		}
	}
	fallback = rs ? ga_ruleset_owner(rs, GA_OWNER_DEFAULT) : NULL;
	return fallback ? fallback : &builtin_user;
}
