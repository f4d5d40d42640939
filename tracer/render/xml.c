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

/* dt_safe_len, less U+FFFE and U+FFFF: valid UTF-8 that XML 1.0's Char
 * production leaves out (a parser rejects the whole document). */
static int dt_xml_char_len(const unsigned char *p)
{
	int n = dt_safe_len(p);
	return n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe ? 0 : n;
}

void dt_xml_put(FILE *f, const char *s, int multiline)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		int n = dt_xml_char_len(p);
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
