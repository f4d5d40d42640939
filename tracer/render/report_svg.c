/* SPDX-License-Identifier: MIT */
/* The run as a picture: time across, one lane per process, a mark for each
 * refused call coloured by its finding, the successful writes recorded
 * beneath, and for SQLite's side files (-wal, -shm, -journal) the
 * stretches in which they existed: an intermittent failure shows as
 * refusals exactly where the side file was absent; and the fact that
 * separated the successful writes from the refusals as a band over time,
 * its refused value's spans over the refusals.
 *
 * Marks are counted into fixed time buckets, so the picture has the same
 * number of elements for ten records and for a hundred thousand, and every
 * text sits in its own row or column. SVG is text: no library. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mounts.h"
#include "recfmt.h"
#include "report.h"
#include "xml.h"

enum {
	SVG_W = 1000,
	SVG_PLOT_X = 240, /* the labels' column is to the left */
	SVG_PLOT_W = 740,
	SVG_BUCKETS = 185,  /* 4 px each */
	SVG_MAX_LANES = 24, /* more processes share one last lane */
	SVG_MAX_FILES = 6,  /* side-file rows */
	SVG_COLORS = 8,     /* findings with a colour of their own; the rest share one */
	SVG_HEAD_H = 50,
	SVG_FILE_H = 16,
	SVG_LANE_H = 34,
	SVG_LEGEND_H = 16,
};

#define SVG_BUCKET_W (SVG_PLOT_W / SVG_BUCKETS)

/* Not green (writes) nor blue (side files); the last is for the rest. */
static const char *const svg_palette[SVG_COLORS + 1] = {"#d62728", "#ff7f0e", "#9467bd",
                                                        "#8c564b", "#e377c2", "#bcbd22",
                                                        "#17becf", "#e7298a", "#555555"};
static const char svg_write_color[] = "#2ca02c", svg_file_color[] = "#1f77b4";

struct svg_lane {
	long pid;                      /* the first pid; the last lane may hold the rest */
	const struct dt_record *first; /* its first record: its ring, its host */
	int others;
	const char *comm;
	uint32_t refused[SVG_BUCKETS][SVG_COLORS + 1];
	uint32_t written[SVG_BUCKETS];
};

struct svg_file {
	const char *path, *role;
	unsigned char existed[SVG_BUCKETS];
	int open;          /* existed at the last observation */
	size_t open_since; /* from this bucket */
};

struct svg {
	const struct dt_report *r;
	uint64_t t0, t1;
	struct svg_lane *lanes; /* SVG_MAX_LANES + 1 */
	size_t nlanes;
	struct svg_file files[SVG_MAX_FILES];
	size_t nfiles;
	size_t *colour_of; /* per group: its finding's colour, SIZE_MAX for none */
	uint64_t drawn_refusals, drawn_writes;
};

/* Writes that say nothing about the worker: device and kernel files
 * (shells open /dev/null for writing), and bubblewrap building its sandbox. */
static int svg_is_noise(const struct dt_record *d)
{
	const char *p = dt_report_path(d);
	static const char *const pseudo[] = {"/dev/", "/proc/", "/sys/"};
	for (size_t k = 0; k < sizeof(pseudo) / sizeof(*pseudo); k++)
		if (!strncmp(p, pseudo[k], strlen(pseudo[k])))
			return 1;
	return d->comm && !strcmp(d->comm, "bwrap");
}

/* The colour a record is drawn in: its finding's (refusals), SVG_COLORS + 1
 * for a successful write, -1 when it is not drawn. */
static int svg_colour(const struct svg *s, size_t i)
{
	const struct dt_record *d = &s->r->recs[i];
	if (d->type == DT_REC_WRITE)
		return svg_is_noise(d) ? -1 : SVG_COLORS + 1;
	if (d->type != DT_REC_DENIAL || !s->r->group_of[i])
		return -1;
	size_t c = s->colour_of[s->r->group_of[i] - 1];
	return c == SIZE_MAX ? -1 : (int)c;
}

static int svg_is_side_file(const struct dt_record *d)
{
	return d->sqlite && (!strcmp(d->sqlite, "wal") || !strcmp(d->sqlite, "shm") ||
	                     !strcmp(d->sqlite, "journal"));
}

static size_t svg_bucket(const struct svg *s, uint64_t t)
{
	double x = (double)(t - s->t0) / (double)(s->t1 - s->t0) * SVG_BUCKETS;
	return x >= SVG_BUCKETS ? SVG_BUCKETS - 1 : (size_t)x;
}

static struct svg_lane *svg_lane_for(struct svg *s, const struct dt_record *d)
{
	for (size_t k = 0; k < s->nlanes; k++)
		if ((s->lanes[k].pid == d->pid && s->lanes[k].first->ring == d->ring) ||
		    s->lanes[k].others)
			return &s->lanes[k];
	struct svg_lane *l = &s->lanes[s->nlanes++];
	const struct dt_record *proc = dt_report_proc(s->r, d, d->pid);
	l->pid = d->pid;
	l->first = d;
	l->comm = proc && proc->comm ? proc->comm : d->comm; /* after exec, the program's name */
	l->others = s->nlanes == SVG_MAX_LANES + 1;
	return l;
}

/* After record d, did its side file exist? A write that is not a removal
 * leaves it there; any other record says what stat found. */
static int svg_exists_after(const struct dt_record *d)
{
	const char *op = d->op ? d->op : "";
	if (d->type == DT_REC_WRITE)
		return !strstr(op, "unlink") && !strstr(op, "remove") && !strstr(op, "rename");
	return d->p[0].has_st && (d->p[0].st.valid & DT_SF_EXISTS);
}

static void svg_file_observe(struct svg *s, const struct dt_record *d)
{
	const char *path = dt_report_path(d);
	struct svg_file *f = NULL;
	for (size_t k = 0; k < s->nfiles && !f; k++)
		if (!strcmp(s->files[k].path, path))
			f = &s->files[k];
	if (!f && s->nfiles == SVG_MAX_FILES)
		return;
	if (!f) {
		f = &s->files[s->nfiles++];
		f->path = path;
		f->role = d->sqlite;
	}
	size_t b = svg_bucket(s, d->time_real);
	int exists = svg_exists_after(d);
	/* seen gone: it went some time after the last sighting, drawn up to
	 * the bucket before */
	size_t until = exists || b == f->open_since ? b : b - 1;
	if (f->open)
		for (size_t k = f->open_since; k <= until; k++)
			f->existed[k] = 1;
	if (exists && !f->open)
		f->open_since = b;
	f->open = exists;
	if (exists)
		f->open_since = b;
}

/* Counts every drawn record into its lane and bucket. */
static void svg_collect(struct svg *s)
{
	const struct dt_report *r = s->r;
	int any = 0;
	for (size_t i = 0; i < r->n; i++)
		if (svg_colour(s, i) >= 0 || svg_is_side_file(&r->recs[i])) {
			uint64_t t = r->recs[i].time_real;
			s->t0 = !any || t < s->t0 ? t : s->t0;
			s->t1 = !any || t > s->t1 ? t : s->t1;
			any = 1;
		}
	if (s->t1 <= s->t0)
		s->t1 = s->t0 + 1000000; /* one record: a millisecond wide */
	for (size_t i = 0; i < r->n; i++) {
		const struct dt_record *d = &r->recs[i];
		int c = svg_colour(s, i);
		if (svg_is_side_file(d))
			svg_file_observe(s, d);
		if (c < 0)
			continue;
		struct svg_lane *l = svg_lane_for(s, d);
		size_t b = svg_bucket(s, d->time_real);
		if (c == SVG_COLORS + 1) {
			l->written[b]++;
			s->drawn_writes++;
		} else {
			l->refused[b][c]++;
			s->drawn_refusals++;
		}
	}
	for (size_t k = 0; k < s->nfiles; k++)
		if (s->files[k].open)
			for (size_t b = s->files[k].open_since; b < SVG_BUCKETS; b++)
				s->files[k].existed[b] = 1;
}

/* s as XML text, at most max characters, "..." when cut. */
static void svg_text(FILE *f, const char *s, size_t max)
{
	char buf[1024];
	size_t n = 0, chars = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p && chars < max && n + 8 < sizeof(buf)) {
		int len = dt_safe_len(p);
		len = len ? len : 1; /* a byte dt_xml_put will escape */
		memcpy(buf + n, p, (size_t)len);
		n += (size_t)len;
		p += len;
		chars++;
	}
	buf[n] = 0;
	dt_xml_put(f, buf, 0);
	if (*p)
		fputs("...", f);
}

static const char *svg_sandbox_kind(const struct dt_record *proc)
{
	int sec = proc && proc->has_seccomp && proc->seccomp == 2;
	if (!proc)
		return "no process record";
	if (dt_proc_sandboxed(proc))
		return sec ? "read-only root (bubblewrap), seccomp" : "read-only root (bubblewrap)";
	return sec ? "no mount sandbox, seccomp" : "no mount sandbox";
}

/* The title and the time axis: five ticks, seconds from the start. */
static void svg_head(FILE *f, const struct svg *s)
{
	char t0[48], phrase[64];
	dt_format_time(s->t0, t0, sizeof(t0));
	fprintf(f,
	        "<text x=\"10\" y=\"18\" font-size=\"13\" font-weight=\"bold\">denytrace "
	        "timeline: %s, %llu refusal%s, %llu successful write%s; from %s</text>\n",
	        dt_problems_phrase(s->r->findings.n, phrase, sizeof(phrase)),
	        (unsigned long long)s->drawn_refusals, s->drawn_refusals == 1 ? "" : "s",
	        (unsigned long long)s->drawn_writes, s->drawn_writes == 1 ? "" : "s", t0);
	fprintf(f, "<line x1=\"%d\" y1=\"40\" x2=\"%d\" y2=\"40\" stroke=\"#999\"/>\n", SVG_PLOT_X,
	        SVG_PLOT_X + SVG_PLOT_W);
	double span = (double)(s->t1 - s->t0) / 1e9;
	for (int i = 0; i <= 4; i++) {
		int x = SVG_PLOT_X + SVG_PLOT_W * i / 4;
		fprintf(f,
		        "<line x1=\"%d\" y1=\"36\" x2=\"%d\" y2=\"40\" stroke=\"#999\"/>"
		        "<text x=\"%d\" y=\"33\" text-anchor=\"%s\" fill=\"#555\">+%.3f s</text>\n",
		        x, x, x,
		        i == 0   ? "start"
		        : i == 4 ? "end"
		                 : "middle",
		        span * i / 4);
	}
}

/* The first problem's separating fact, or NULL. */
static const struct dt_difference *svg_band_fact(const struct svg *s)
{
	const struct dt_findings *fs = &s->r->findings;
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].intermittent && fs->v[i].diff->fact && fs->v[i].diff->nspans)
			return fs->v[i].diff;
	return NULL;
}

/* "0755 / 0555" of a side, shortened. */
static void svg_side_text(FILE *f, const struct dt_diff_side *side)
{
	for (size_t i = 0; i < side->nvalues; i++) {
		if (i)
			fputs(" or ", f);
		svg_text(f, side->values[i], 24);
	}
}

/* A span may begin before the first record drawn (a chmod of a directory
 * nobody was refused in yet): it starts with the picture. */
static size_t svg_band_bucket(const struct svg *s, uint64_t t)
{
	return t <= s->t0 ? 0 : svg_bucket(s, t);
}

/* The separating fact as a band over time: its successes' value (green)
 * and its refusals' (red), so that the refusals sit inside the bad spans. */
static void svg_band(FILE *f, const struct svg *s, const struct dt_difference *d, int y)
{
	fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y + 12);
	svg_text(f, d->fact, 18);
	fputs(": <tspan fill=\"#2ca02c\">", f);
	svg_side_text(f, &d->ok);
	fputs("</tspan> / <tspan fill=\"#d62728\">", f);
	svg_side_text(f, &d->refused);
	fputs("</tspan></text>\n", f);
	for (size_t k = 0; k < d->nspans; k++) {
		size_t b = svg_band_bucket(s, d->spans[k].from_ns);
		size_t e =
		    k + 1 < d->nspans ? svg_band_bucket(s, d->spans[k + 1].from_ns) : SVG_BUCKETS;
		if (e <= b)
			e = b + 1;
		fprintf(f,
		        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
		        "fill-opacity=\"0.45\"><title>",
		        SVG_PLOT_X + (int)b * SVG_BUCKET_W, y + 2, (int)(e - b) * SVG_BUCKET_W,
		        SVG_FILE_H - 4, d->spans[k].bad ? "#d62728" : svg_write_color);
		svg_side_text(f, d->spans[k].bad ? &d->refused : &d->ok);
		fputs("</title></rect>\n", f);
	}
}

/* One row per side file: where it existed. */
static void svg_files(FILE *f, const struct svg *s, int y)
{
	for (size_t k = 0; k < s->nfiles; k++, y += SVG_FILE_H) {
		const struct svg_file *sf = &s->files[k];
		const char *base = strrchr(sf->path, '/');
		fprintf(f,
		        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eef3f8\"/>\n",
		        SVG_PLOT_X, y + 2, SVG_PLOT_W, SVG_FILE_H - 4);
		fprintf(f, "<text x=\"10\" y=\"%d\" fill=\"%s\">", y + 12, svg_file_color);
		svg_text(f, base ? base + 1 : sf->path, 28);
		fputs(" existed</text>\n", f);
		for (size_t b = 0; b < SVG_BUCKETS;) {
			size_t e = b;
			while (e < SVG_BUCKETS && sf->existed[e])
				e++;
			if (e > b)
				fprintf(f,
				        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
				        "fill=\"%s\" "
				        "fill-opacity=\"0.6\"/>\n",
				        SVG_PLOT_X + (int)b * SVG_BUCKET_W, y + 2,
				        (int)(e - b) * SVG_BUCKET_W, SVG_FILE_H - 4,
				        svg_file_color);
			b = e + 1;
		}
	}
}

/* One lane: its label, then per bucket the refusals (one band per colour
 * present, stacked) above the successful writes. */
static void svg_lane(FILE *f, const struct svg *s, const struct svg_lane *l, size_t k, int y)
{
	fprintf(f, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", y, SVG_W,
	        SVG_LANE_H, k % 2 ? "#ffffff" : "#f4f4f4");
	fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y + 14);
	if (l->others)
		fputs("other processes", f);
	else {
		svg_text(f, l->comm ? l->comm : "?", 16);
		fprintf(f, " pid %ld", l->pid);
		const char *host = dt_report_host(s->r, l->first);
		if (host) {
			fputs(" on ", f);
			svg_text(f, host, 16);
		}
	}
	fprintf(f, "</text>\n<text x=\"10\" y=\"%d\" font-size=\"10\" fill=\"#666\">", y + 27);
	svg_text(f,
	         l->others ? "beyond the first lanes"
	                   : svg_sandbox_kind(dt_report_proc(s->r, l->first, l->pid)),
	         36);
	fputs("</text>\n", f);
	for (size_t b = 0; b < SVG_BUCKETS; b++) {
		int x = SVG_PLOT_X + (int)b * SVG_BUCKET_W, present = 0, row = 0;
		for (int c = 0; c <= SVG_COLORS; c++)
			present += l->refused[b][c] > 0;
		for (int c = 0; c <= SVG_COLORS && present; c++) {
			if (!l->refused[b][c])
				continue;
			int h = 18 / present, y0 = y + 4 + row++ * h;
			fprintf(f,
			        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			        "fill=\"%s\"><title>%u "
			        "refused</title></rect>\n",
			        x, y0, SVG_BUCKET_W - 1, h, svg_palette[c], l->refused[b][c]);
		}
		if (l->written[b])
			fprintf(f,
			        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"8\" "
			        "fill=\"%s\"><title>%u "
			        "written</title></rect>\n",
			        x, y + 23, SVG_BUCKET_W - 1, svg_write_color, l->written[b]);
	}
}

static void svg_swatch(FILE *f, int y, const char *colour)
{
	fprintf(f, "<rect x=\"10\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", y + 2,
	        colour);
}

/* What the colours mean: the findings, writes, side files. */
static void svg_legend(FILE *f, const struct svg *s, int y)
{
	const struct dt_findings *fs = &s->r->findings;
	for (size_t i = 0; i < fs->n && i <= SVG_COLORS; i++, y += SVG_LEGEND_H) {
		svg_swatch(f, y, svg_palette[i]);
		fprintf(f, "<text x=\"26\" y=\"%d\">", y + 11);
		if (i == SVG_COLORS)
			fprintf(f, "%zu more problems", fs->n - SVG_COLORS);
		else {
			fprintf(f, "PROBLEM %zu: ", i + 1);
			svg_text(f, fs->v[i].title, 120);
			fprintf(f, " (%llu refused)", (unsigned long long)fs->v[i].count);
		}
		fputs("</text>\n", f);
	}
	svg_swatch(f, y, svg_write_color);
	fprintf(f, "<text x=\"26\" y=\"%d\">%s</text>\n", y + 11,
	        s->drawn_writes
	            ? "successful write (recorded when its facts were news; all with --all)"
	            : "no successful writes recorded (none made, or --refusals-only)");
	if (s->nfiles) {
		y += SVG_LEGEND_H;
		svg_swatch(f, y, svg_file_color);
		fprintf(f,
		        "<text x=\"26\" y=\"%d\">SQLite side file existed (as the records saw "
		        "it)</text>\n",
		        y + 11);
	}
}

void dt_report_svg(FILE *f, const struct dt_report *r)
{
	struct svg s = {.r = r};
	s.lanes = calloc(SVG_MAX_LANES + 1, sizeof(*s.lanes));
	s.colour_of = malloc((r->ngroups + 1) * sizeof(*s.colour_of));
	if (!s.lanes || !s.colour_of) {
		free(s.lanes);
		free(s.colour_of);
		return;
	}
	for (size_t g = 0; g < r->ngroups; g++)
		s.colour_of[g] = SIZE_MAX;
	for (size_t i = 0; i < r->findings.n; i++)
		for (size_t k = 0; k < r->findings.v[i].ngroups; k++)
			s.colour_of[r->findings.v[i].groups[k]] = i < SVG_COLORS ? i : SVG_COLORS;
	svg_collect(&s);

	size_t nlegend =
	    (r->findings.n > SVG_COLORS ? SVG_COLORS + 1 : r->findings.n) + 1 + (s.nfiles > 0);
	const struct dt_difference *band = svg_band_fact(&s);
	int band_y = SVG_HEAD_H, files_y = band_y + (band ? SVG_FILE_H : 0);
	int lanes_y = files_y + (int)s.nfiles * SVG_FILE_H + 6;
	int legend_y = lanes_y + (int)(s.nlanes ? s.nlanes : 1) * SVG_LANE_H + 12;
	int h = legend_y + (int)nlegend * SVG_LEGEND_H + 10;
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
	        "font-size=\"11\">\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
	        SVG_W, h, SVG_W, h, SVG_W, h);
	svg_head(f, &s);
	if (band)
		svg_band(f, &s, band, band_y);
	svg_files(f, &s, files_y);
	for (size_t k = 0; k < s.nlanes; k++)
		svg_lane(f, &s, &s.lanes[k], k, lanes_y + (int)k * SVG_LANE_H);
	if (!s.nlanes)
		fprintf(f, "<text x=\"%d\" y=\"%d\">No refusals or writes were recorded.</text>\n",
		        SVG_PLOT_X, lanes_y + 20);
	svg_legend(f, &s, legend_y);
	fputs("</svg>\n", f);
	free(s.lanes);
	free(s.colour_of);
}
