# Sourced by every corpus scenario (tests/corpus/scenarios), for its setup
# and for its run line. The suite (tests/integration/test_corpus.c) sets:
#   T        the scenario's fresh directory (mode 0755, under /var/tmp)
#   DT_HELPERS  build/helpers (landlock-run)
#   CODEX_BIN   the real Codex CLI, for sandbox=codex rows
# The run line is executed under `denytrace run`: everything it starts is
# traced, the sandbox launcher included.

export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
export LC_ALL=C
export HOME="$T/home"
export GIT_AUTHOR_NAME=corpus GIT_AUTHOR_EMAIL=corpus@example.invalid
export GIT_COMMITTER_NAME=corpus GIT_COMMITTER_EMAIL=corpus@example.invalid
export GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME" && chmod 0777 "$HOME"

# bubblewrap the way Codex uses it: everything read-only, then the
# scenario's own --bind/--ro-bind arguments, then "--" COMMAND.
bw() {
	bwrap --ro-bind / / --dev /dev --proc /proc "$@"
}

# Landlock: read-only everywhere except the --rw paths.
ll() {
	"$DT_HELPERS/landlock-run" --rw /dev/null "$@"
}

# No sandbox at all: only owner and mode bits, as uid/gid 65534.
nobody() {
	setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"
}

# The real Codex sandbox in workspace-write mode, from the workspace $T/ws.
# CODEX_HOME must not be under /tmp (Codex refuses it), hence /var/tmp.
cx() {
	mkdir -p "$T/codex-home"
	(cd "$T/ws" && CODEX_HOME="$T/codex-home" "$CODEX_BIN" sandbox \
		-c 'sandbox_mode="workspace-write"' "$@")
}

# A git repository with one staged change, owned by whoever runs this.
mkrepo() {
	git init -q "$1" && echo a > "$1/f" && git -C "$1" add f
}

# A SQLite database with one table; $2 is the journal mode (delete, wal).
mkdb() {
	mkdir -p "$(dirname "$1")"
	sqlite3 "$1" "pragma journal_mode=$2; create table t(x);" > /dev/null
}

# The write a board worker does, with Python's sqlite3 module:
# python3 -c "$PYWRITE" DB (a variable, so that it reaches into sandboxes).
PYWRITE='import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("insert into t values (1)")
c.commit()'

# A tar archive with a directory and a file, from $T/src.
mktar() {
	mkdir -p "$T/src/d" && echo x > "$T/src/d/f" && tar -C "$T/src" -cf "$1" d
}
