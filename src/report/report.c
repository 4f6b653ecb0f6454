/* report.c: the table of output formats.  See report.h; the number and
 * text formatting that the formats share is in format.c. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

const ga_reporter ga_reporters[] = {
	{ "text", "terminal report: what to do first, then every kernel", ga_report_text },
	{ "json", "machine-readable report with the profile embedded", ga_report_json },
	{ "markdown", "short summary for a pull-request comment", ga_report_markdown },
	{ "junit", "JUnit XML, one test case per kernel, for CI test reports", ga_report_junit },
	{ "html", "one self-contained page: roofline (inline SVG), findings, kernel table",
	  ga_report_html },
	{ "sarif", "SARIF 2.1.0 for code scanning: each finding on its source line",
	  ga_report_sarif },
};
const size_t ga_n_reporters = GA_ARRAY_LEN(ga_reporters);

const ga_reporter *ga_reporter_find(const char *name)
{
	if (!name)
		return NULL;
	if (strcmp(name, "md") == 0)
		name = "markdown";
	for (size_t i = 0; i < ga_n_reporters; i++)
		if (strcmp(ga_reporters[i].name, name) == 0)
			return &ga_reporters[i];
	return NULL;
}
