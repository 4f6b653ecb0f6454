/* owner.c: whose kernel it is, from the owners of the rule set
 * (rules/owners.yaml).  The first owner, in file order, with a pattern
 * that matches the kernel owns it:
 *   - a glob (fnmatch(3), no flags) matches the demangled name without its
 *     leading "void " or the mangled name, whole;
 *   - a regex (POSIX extended) matches anywhere in either name;
 *   - a module glob matches the module the kernel was loaded from, where
 *     the profile records one.
 * A module match comes first: an owner whose module glob matches owns the
 * kernel whatever its name.  Then names, owner by owner.
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

/* The kind of the first name pattern, of any owner, that matches. */
static const char *kind_by_name(const ga_ruleset *rs, const char *name, const char *mangled)
{
	for (size_t i = 0; i < rs->n_owners; i++)
		for (size_t k = 0; k < rs->owners[i].n_patterns; k++) {
			const ga_owner_pattern *pt = &rs->owners[i].patterns[k];
			if (pt->how != GA_OWNER_MODULE && pattern_matches(pt, name, mangled, NULL))
				return pt->kind;
		}
	return NULL;
}

const ga_owner *ga_owner_of(const ga_ruleset *rs, const char *name, const char *mangled,
                            const char *module, const char **kind)
{
	const ga_owner *fallback;

	if (kind)
		*kind = NULL;
	/* The module first: where the code came from says more than a name
	 * (a CUB sort inside libtorch_cuda is PyTorch's).  The name still
	 * says what the kernel does: its kind. */
	for (size_t i = 0; module && rs && i < rs->n_owners; i++) {
		const ga_owner *o = &rs->owners[i];
		int hit = 0;
		for (size_t k = 0; k < o->n_patterns && !hit; k++)
			hit = o->patterns[k].how == GA_OWNER_MODULE &&
			      pattern_matches(&o->patterns[k], name, mangled, module);
		if (!hit)
			continue;
		if (kind)
			*kind = kind_by_name(rs, name, mangled);
		return o;
	}
	for (size_t i = 0; rs && i < rs->n_owners; i++) {
		const ga_owner *o = &rs->owners[i];
		for (size_t k = 0; k < o->n_patterns; k++) {
			if (o->patterns[k].how == GA_OWNER_MODULE ||
			    !pattern_matches(&o->patterns[k], name, mangled, module))
				continue;
			if (kind)
				*kind = o->patterns[k].kind;
			return o;
		}
	}
	fallback = rs ? ga_ruleset_owner(rs, GA_OWNER_DEFAULT) : NULL;
	return fallback ? fallback : &builtin_user;
}
