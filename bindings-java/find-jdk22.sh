#!/usr/bin/env bash
# Finds the javac of a JDK 22 or later, for the API jar's one class that needs
# it (META-INF/versions/22, java.lang.foreign), where Maven's toolchains plugin
# would look: Maven's own JDK; the JDKs of toolchains.xml (the user's: -t FILE
# as mvn was given it, else ~/.m2/toolchains.xml; then the global one:
# -gt FILE, else MAVEN_HOME/conf/toolchains.xml); then, unless
# -Dtoolchain.jdk.discover=false, the JDKs installed in the usual places
# (JAVA*_HOME, /usr/lib/jvm, /usr/java, /opt/java, /usr/jdk, SDKMAN, ~/.jdks,
# ~/.m2/jdks and the like), the newest first. A JDK counts when its `release`
# file says 22 or later and it has bin/javac.
#
#   find-jdk22.sh OUT MAVEN_JAVA_HOME MAVEN_HOME DISCOVER
#
# Writes OUT, the properties the API module's build reads next:
#   usertrace.javac22       the javac found (empty with none)
#   usertrace.java22.skip   true with none: the jar is built without that class
# With none, says so in one line: the jar then works on every JDK as it does
# without that class (on JDK 17 to 23, as always); a JDK 22+ only makes
# isEnabled() cheaper on JDK 24 and later.
# Maven runs this (java/usertrace/pom.xml, at initialize). mvn's own script
# exports its arguments as MAVEN_CMD_LINE_ARGS, where -t and -gt are read
# (a plugin's parameters cannot name the toolchains files in Maven 3).
set -euo pipefail
out=${1:?usage: find-jdk22.sh OUT MAVEN_JAVA_HOME MAVEN_HOME DISCOVER}
maven_java_home=${2:-}
maven_home=${3:-}
discover=${4:-true}

# The file mvn was given with option $1 (short) or $2 (long), else $3.
option_file() {
  local args arg file=$3 next=""
  read -r -a args <<<"${MAVEN_CMD_LINE_ARGS:-}"
  for arg in "${args[@]}"; do
    if [ -n "$next" ]; then file=$arg next=""; continue; fi
    case "$arg" in
      "$1" | "$2") next=1 ;;
      "$2"=*) file=${arg#*=} ;;
    esac
  done
  echo "$file"
}

# The feature version in HOME/release (JAVA_VERSION="25.0.1": 25), when HOME
# is a JDK with a javac; nothing otherwise.
feature() {
  local v
  [ -x "$1/bin/javac" ] || return 0
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null | head -1)
  if [ -n "$v" ]; then echo "$v"; fi
}

# The jdkHome of each toolchain in toolchains.xml FILE.
toolchain_homes() {
  [ -f "$1" ] || return 0
  tr -d '\n' <"$1" | grep -o '<jdkHome>[^<]*</jdkHome>' | sed 's:<jdkHome>[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*</jdkHome>:\1:' || true
}

# The JDK homes the toolchains plugin's discovery would look at.
discovered_homes() {
  local d
  env | sed -n 's/^JAVA[A-Za-z0-9_]*_HOME=//p'
  for d in "$HOME/.jdks" "$HOME/.m2/jdks" "$HOME/.sdkman/candidates/java" "$HOME/.gradle/jdks" \
    "$HOME/.jenv/versions" "$HOME/.jbang/cache/jdks" "$HOME/.asdf/installs" "$HOME/.jabba/jdk" \
    /usr/jdk /usr/java /opt/java /usr/lib/jvm; do
    [ -d "$d" ] && printf '%s\n' "$d"/*/
  done
  return 0
}

# The first of the homes on stdin that is a JDK 22+, as "VERSION HOME"; with
# NEWEST, the newest of them.
first_22() {
  local home v found=()
  while IFS= read -r home; do
    [ -n "$home" ] || continue
    home=${home%/}
    v=$(feature "$home")
    [ -n "$v" ] && [ "$v" -ge 22 ] && found+=("$v $home")
  done
  [ ${#found[@]} -gt 0 ] || return 0
  if [ "${1:-}" = newest ]; then printf '%s\n' "${found[@]}" | sort -n -s -k1,1 | tail -1; else echo "${found[0]}"; fi
}

user_toolchains=$(option_file -t --toolchains "$HOME/.m2/toolchains.xml")
global_toolchains=$(option_file -gt --global-toolchains "$maven_home/conf/toolchains.xml")
jdk=$(printf '%s\n' "$maven_java_home" | first_22)
[ -n "$jdk" ] || jdk=$({ toolchain_homes "$user_toolchains"; toolchain_homes "$global_toolchains"; } | first_22)
if [ -z "$jdk" ] && [ "$discover" != false ]; then
  jdk=$(discovered_homes | first_22 newest)
fi

mkdir -p "$(dirname "$out")"
if [ -n "$jdk" ]; then
  printf 'usertrace.javac22=%s\nusertrace.java22.skip=false\n' "${jdk#* }/bin/javac" >"$out"
else
  printf 'usertrace.javac22=\nusertrace.java22.skip=true\n' >"$out"
  echo "usertrace: no JDK 22 or later found (Maven's, toolchains.xml's or installed): the API jar is built without META-INF/versions/22, so on JDK 24+ isEnabled() reads through a ByteBuffer, not a MemorySegment; install a JDK 22+ to build it whole" >&2
fi
