/* SPDX-License-Identifier: MIT */
#include "xml.h"

#include "recfmt.h"

static const char *dt_xml_entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	default:
		return NULL;
	}
}

void dt_xml_put(FILE *f, const char *s, int multiline)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		int n = dt_safe_len(p);
		const char *ent = dt_xml_entity(*p);
		if (multiline && (*p == '\n' || *p == '\t')) {
			fputc(*p++, f);
		} else if (!n) {
			fprintf(f, "\\x%02x", *p++);
		} else if (ent) {
			fputs(ent, f);
			p++;
		} else {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
}
