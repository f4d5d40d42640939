/* SPDX-License-Identifier: MIT */
/* Text into XML (JUnit results, SVG pictures): one escaper for every string
 * a traced program chose. */
#ifndef DENYTRACE_XML_H
#define DENYTRACE_XML_H

#include <stdio.h>

/* Writes s as XML character data or an attribute value: & < > " ' as
 * entities; every byte dt_safe_len refuses (control characters, invalid
 * UTF-8: XML 1.0 forbids most of them) as the four characters \xNN. With
 * multiline, newlines and tabs stay (element content only: in an attribute
 * a parser turns them into spaces). */
void dt_xml_put(FILE *f, const char *s, int multiline);

#endif
