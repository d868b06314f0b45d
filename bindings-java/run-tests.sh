#!/usr/bin/env bash
# Tests of the Java binding (JUnit 5).
#
#   bindings-java/run-tests.sh host    # mvn verify: builds the JNI library (cargo), the jars,
#                                      # and runs every test but the `kernel` ones (Surefire + Failsafe);
#                                      # then `java -javaagent:` on the agent jar alone
#   bindings-java/run-tests.sh guest   # inside a kernel with user_events (harness/in-guest), offline:
#                                      # the JUnit console launcher on what `host` built, every test
#                                      # but the `host` ones; `kernel` tests fail without user_events
#   bindings-java/run-tests.sh guest-from-host   # host build, then `guest` through harness/in-guest
#   bindings-java/run-tests.sh bench   # in the guest: the JMH benchmarks (see BENCHMARKS.md)
#
# Each prints its runners' summaries, then one line `java: N passed, M failed`,
# and exits non-zero if a test failed or could not run.
#
# `host` also runs java/opentelemetry's end-to-end tests, which need the
# Collector harness/build-otel-components builds (~/.cache/usertrace/bin/otelcol)
# and fetch the OpenTelemetry Java agent through Maven; they fail, never skip,
# without either.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
modules=(java/usertrace java/agent java/logback java/log4j2 java/opentelemetry)
agent_jar=$here/java/agent/target/usertrace-agent.jar
launcher=$here/java/agent/target/junit-platform-console-standalone.jar
# The usertrace CLI, which a kernel test records with (`cargo build -p usertrace-cli`).
cli=${USERTRACE_CLI:-${CARGO_TARGET_DIR:-$here/../target}/debug/usertrace}

build_cli() {
  (cd "$here/.." && cargo build --quiet -p usertrace-cli) || { echo "run-tests: cargo build -p usertrace-cli failed" >&2; return 1; }
}

# Checks run by this script itself, beside the JUnit tests.
script_passed=0
script_failed=0

script_result() { # NAME RC LOG
  if [ "$2" = 0 ]; then
    echo "PASS $1"
    script_passed=$((script_passed + 1))
  else
    echo "FAIL $1"
    sed 's/^/    /' <<<"$3"
    script_failed=$((script_failed + 1))
  fi
}

# The usertrace-agent module's jars (its main artifact, the one Maven
# publishes, and any other but the pre-shading, sources and javadoc ones)
# each start a JVM as -javaagent on their own: no class path, user_events
# or not. With verbose=true the agent says which: registered, or why not.
agent_jar_starts_alone() {
  local j out rc found=0
  for j in "$here"/java/agent/target/*.jar; do
    case "$(basename "$j")" in original-*|*-sources.jar|*-javadoc.jar|junit-platform-console-standalone.jar) continue ;; esac
    [ -f "$j" ] || continue
    found=1
    rc=0
    out=$(cd /tmp && timeout 120 java -javaagent:"$j"=verbose=true -version 2>&1) || rc=$?
    if [ "$rc" = 0 ] && { ! grep -q -e '^usertrace agent: tracepoints disabled: ' -e '^usertrace agent: registered ' <<<"$out" ||
      grep -q -e Exception -e Error <<<"$out"; }; then
      rc=1
    fi
    script_result "agent_jar_starts_alone ($(basename "$j"))" "$rc" "$out"
  done
  [ "$found" = 1 ] || script_result agent_jar_starts_alone 1 "no agent jar in $here/java/agent/target"
}

# What `mvn deploy` would upload to Maven Central, deployed into a directory
# instead and signed with a throwaway key: the parent pom, the API, the
# agent, the Logback and Log4j2 appenders and the OpenTelemetry exporters, each with its pom, sources and
# javadoc jars, every file with a signature that gpg verifies; and neither
# the benchmarks nor the appenders' test support. Without a key, the same
# deploy signs nothing (Central would refuse it; a local one needs none).
release_deploys_signed_api_and_agent_and_no_benchmarks_or_test_support() {
  local work rc=0 out version repo f missing=""
  work=$(mktemp -d /tmp/usertrace-java-release.XXXXXX)
  version=$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$here/pom.xml" | head -1)
  export GNUPGHOME=$work/gnupg
  mkdir -m 700 "$GNUPGHOME"
  out=$(gpg --batch --passphrase '' --quick-gen-key 'usertrace test <test@usertrace.invalid>' ed25519 sign never 2>&1) || rc=$?
  if [ "$rc" = 0 ]; then
    out=$(cd "$here" && mvn -B -ntp -q -Dstyle.color=never -DskipTests -Dusertrace.excludedGroups=kernel \
      -Dgpg.keyname=test@usertrace.invalid -DaltDeploymentRepository=staging::file://"$work/signed" deploy 2>&1) || rc=$?
  fi
  repo=$work/signed/dev/usertrace
  if [ "$rc" = 0 ]; then
    for f in usertrace-parent/$version/usertrace-parent-$version.pom \
      usertrace/$version/usertrace-$version.{pom,jar} usertrace/$version/usertrace-$version-{sources,javadoc}.jar \
      usertrace-agent/$version/usertrace-agent-$version.{pom,jar} usertrace-agent/$version/usertrace-agent-$version-{sources,javadoc}.jar \
      usertrace-logback/$version/usertrace-logback-$version.{pom,jar} usertrace-logback/$version/usertrace-logback-$version-{sources,javadoc}.jar \
      usertrace-log4j2/$version/usertrace-log4j2-$version.{pom,jar} usertrace-log4j2/$version/usertrace-log4j2-$version-{sources,javadoc}.jar \
      usertrace-opentelemetry/$version/usertrace-opentelemetry-$version.{pom,jar} \
      usertrace-opentelemetry/$version/usertrace-opentelemetry-$version-{sources,javadoc}.jar; do
      [ -f "$repo/$f" ] && gpg --batch --verify "$repo/$f.asc" "$repo/$f" 2>/dev/null || missing="$missing $f(.asc)"
    done
    [ -z "$missing" ] || { rc=1; out="missing or unverified:$missing"; }
    [ ! -e "$repo/usertrace-bench" ] || { rc=1; out="the benchmarks would be published: $(ls "$repo/usertrace-bench")"; }
    [ ! -e "$repo/usertrace-test-support" ] || { rc=1; out="the test support would be published: $(ls "$repo/usertrace-test-support")"; }
  fi
  if [ "$rc" = 0 ]; then
    out=$(cd "$here" && mvn -B -ntp -q -Dstyle.color=never -DskipTests -DaltDeploymentRepository=staging::file://"$work/unsigned" deploy 2>&1) || rc=$?
    if [ "$rc" = 0 ] && find "$work/unsigned" -name '*.asc' | grep -q .; then rc=1; out="signed with no key named"; fi
  fi
  unset GNUPGHOME
  script_result release_deploys_signed_api_and_agent_and_no_benchmarks_or_test_support "$rc" "$out"
  rm -rf "$work"
}

# The API jar is the module dev.usertrace: a modular application requires it,
# and runs (no user_events: tracepoints stay disabled), but cannot compile
# against dev.usertrace.internal, which the module does not export.
api_jar_is_a_module_exporting_only_the_api() {
  local jar work rc=0 out
  jar=$(ls "$here"/java/usertrace/target/usertrace-*.jar 2>/dev/null | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -1 || true)
  work=$(mktemp -d /tmp/usertrace-java-module.XXXXXX)
  mkdir -p "$work/ok/check" "$work/bad/check"
  echo 'module usertrace.check { requires dev.usertrace; }' | tee "$work/ok/module-info.java" >"$work/bad/module-info.java"
  cat >"$work/ok/check/Main.java" <<'JAVA'
package check;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.Usertrace;

public final class Main {
    public static void main(String[] args) {
        try (Provider p = new Provider("modcheck")) {
            Tracepoint tp = p.tracepoint("ev", Field.u32("n"), Field.string("s"));
            tp.emit(1L, "x");
            tp.event().put(2L).put("y").emit();
            System.out.println("module app: " + Usertrace.status().availability() + ", enabled " + tp.isEnabled());
        }
    }
}
JAVA
  cat >"$work/bad/check/Main.java" <<'JAVA'
package check;

public final class Main {
    public static void main(String[] args) {
        System.out.println(dev.usertrace.internal.Native.class);
    }
}
JAVA
  out=$({
    [ -n "$jar" ] || { echo "no API jar in $here/java/usertrace/target"; exit 1; }
    jar --describe-module --file "$jar" &&
      javac -d "$work/ok/out" --module-path "$jar" "$work/ok/module-info.java" "$work/ok/check/Main.java" &&
      (cd /tmp && java --module-path "$jar:$work/ok/out" -m usertrace.check/check.Main) || exit 1
    if javac -d "$work/bad/out" --module-path "$jar" "$work/bad/module-info.java" "$work/bad/check/Main.java"; then
      echo "a module could compile against dev.usertrace.internal"; exit 1
    fi
  } 2>&1) || rc=1
  if [ "$rc" = 0 ] && ! grep -q 'package dev.usertrace.internal is not visible' <<<"$out"; then rc=1; fi
  rm -rf "$work"
  script_result api_jar_is_a_module_exporting_only_the_api "$rc" "$out"
}

# The API jar is multi-release: on JDK 24+ (the newest in /usr/lib/jvm, or
# $USERTRACE_JAVA24_HOME) it serves its META-INF/versions/22 classes, and
# isEnabled() takes the constant-segment route, printing nothing with the
# native access JNI needs. (The JUnit tests run on target/classes, a folder,
# where the JVM ignores versioned classes: this is the check of the jar.)
api_jar_reads_words_through_the_segment_on_jdk_24_and_later() {
  local jar java24 work rc=0 out
  java24=${USERTRACE_JAVA24_HOME:+$USERTRACE_JAVA24_HOME/bin/java}
  if [ -z "$java24" ]; then
    java24=$(for h in /usr/lib/jvm/*/; do
      v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$h/release" 2>/dev/null)
      [ -n "$v" ] && [ "$v" -ge 24 ] && [ -x "$h/bin/java" ] && echo "$v ${h}bin/java"
    done | sort -n | tail -1 | cut -d' ' -f2)
  fi
  if [ -z "$java24" ]; then
    echo "SKIP api_jar_reads_words_through_the_segment_on_jdk_24_and_later (no JDK 24+)"
    return 0
  fi
  jar=$(ls "$here"/java/usertrace/target/usertrace-*.jar 2>/dev/null | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -1 || true)
  work=$(mktemp -d /tmp/usertrace-java-mrjar.XXXXXX)
  mkdir -p "$work/check"
  cat >"$work/check/Route.java" <<'JAVA'
package check;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.internal.EnableWord;

public final class Route {
    public static void main(String[] args) {
        try (Provider p = new Provider("mrcheck")) {
            Tracepoint tp = p.tracepoint("ev", Field.u32("n"));
            System.out.println("route=" + EnableWord.route() + " enabled=" + tp.isEnabled());
        }
    }
}
JAVA
  out=$({
    [ -n "$jar" ] || { echo "no API jar in $here/java/usertrace/target"; exit 1; }
    javac --release 17 -d "$work/out" -cp "$jar" "$work/check/Route.java" || exit 1
    (cd /tmp && "$java24" --enable-native-access=ALL-UNNAMED -cp "$jar:$work/out" check.Route 2>"$work/err") || exit 1
    cat "$work/err"
    [ ! -s "$work/err" ] || { echo "stderr was not empty"; exit 1; }
  } 2>&1) || rc=1
  if [ "$rc" = 0 ] && ! grep -q '^route=SEGMENT enabled=false$' <<<"$out"; then rc=1; fi
  rm -rf "$work"
  script_result "api_jar_reads_words_through_the_segment_on_jdk_24_and_later ($java24)" "$rc" "$out"
}

# A newcomer's build: `mvn -B -q package` where JDK 17 is the only JDK (a
# toolchains.xml naming it alone, discovery off, Maven on it), on a copy of
# the sources. The API jar builds without META-INF/versions/22, one line says
# so, and the jar loads: on JDK 17 isEnabled() reads through Unsafe, as it
# always has there; on a JDK 24+, if this machine has one, through a
# ByteBuffer rather than the missing segment class. The copy is outside the
# cargo workspace, so it loads the JNI library the main build made.
api_jar_builds_with_jdk_17_alone() {
  local jdk17 java24 work lib jar rc=0 out
  jdk17=$(jdk_home 17 17)
  if [ -z "$jdk17" ]; then
    echo "SKIP api_jar_builds_with_jdk_17_alone (no JDK 17 in /usr/lib/jvm)"
    return 0
  fi
  java24=$(jdk_home 24 999)
  lib=${CARGO_TARGET_DIR:-$here/../target}/release/libusertrace_jni.so
  work=$(mktemp -d /tmp/usertrace-java-jdk17.XXXXXX)
  printf '<toolchains><toolchain><type>jdk</type><provides><version>17</version></provides>%s</toolchain></toolchains>\n' \
    "<configuration><jdkHome>$jdk17</jdkHome></configuration>" >"$work/toolchains.xml"
  mkdir -p "$work/check/check"
  cat >"$work/check/check/Route.java" <<'JAVA'
package check;

import dev.usertrace.Field;
import dev.usertrace.Provider;
import dev.usertrace.Tracepoint;
import dev.usertrace.Usertrace;
import dev.usertrace.internal.EnableWord;

public final class Route {
    public static void main(String[] args) {
        try (Provider p = new Provider("jdk17check")) {
            Tracepoint tp = p.tracepoint("ev", Field.u32("n"));
            tp.emit(1L);
            System.out.println("route=" + EnableWord.route() + " enabled=" + tp.isEnabled() + " " + Usertrace.status().availability());
        }
    }
}
JAVA
  out=$({
    tar -C "$here" --exclude=target -cf - pom.xml find-jdk22.sh build-native.sh java | tar -C "$work" -xf - || exit 1
    (cd "$work" && JAVA_HOME=$jdk17 mvn -B -q -ntp -Dstyle.color=never -t "$work/toolchains.xml" --global-toolchains "$work/toolchains.xml" \
      -Dtoolchain.jdk.discover=false -Dusertrace.native.skip=true -DskipTests -pl java/usertrace package 2>&1) |
      sed $'s/\e\\[[0-9;]*m//g' >"$work/mvn.log" || { cat "$work/mvn.log"; exit 1; }
    cat "$work/mvn.log"
    [ "$(grep -c '^usertrace: no JDK 22 or later found' "$work/mvn.log")" = 1 ] || { echo "not one line saying there is no JDK 22+"; exit 1; }
    jar=$(ls "$work"/java/usertrace/target/usertrace-*.jar | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -1)
    [ -n "$jar" ] || { echo "no API jar built"; exit 1; }
    if unzip -Z1 "$jar" | grep '^META-INF/versions/22/'; then echo "$jar has JDK 22 classes"; exit 1; fi
    "$jdk17/bin/javac" --release 17 -d "$work/out" -cp "$jar" "$work/check/check/Route.java" || exit 1
    (cd /tmp && "$jdk17/bin/java" -Dusertrace.native.path="$lib" -cp "$jar:$work/out" check.Route) || exit 1
    if [ -n "$java24" ]; then
      (cd /tmp && "$java24/bin/java" --enable-native-access=ALL-UNNAMED -Dusertrace.native.path="$lib" -cp "$jar:$work/out" check.Route) || exit 1
    fi
  } 2>&1) || rc=1
  if [ "$rc" = 0 ] && ! grep -q '^route=UNSAFE enabled=false ' <<<"$out"; then rc=1; fi
  if [ "$rc" = 0 ] && [ -n "$java24" ] && ! grep -q '^route=BUFFER enabled=false ' <<<"$out"; then rc=1; fi
  if [ "$rc" = 0 ] && grep -q 'NATIVE_LIBRARY_UNAVAILABLE' <<<"$out"; then rc=1; fi
  rm -rf "$work"
  script_result "api_jar_builds_with_jdk_17_alone ($jdk17)" "$rc" "$out"
}

# The newest JDK home in /usr/lib/jvm whose feature version is from $1 to $2.
jdk_home() {
  local h v
  for h in /usr/lib/jvm/*/; do
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$h/release" 2>/dev/null)
    if [ -n "$v" ] && [ "$v" -ge "$1" ] && [ "$v" -le "$2" ] && [ -x "$h/bin/javac" ]; then echo "$v ${h%/}"; fi
  done | sort -n | tail -1 | cut -d' ' -f2
}

# Extracts each library the API jar ships into WORK; prints their paths in
# the jar, one per line.
extract_shipped_libraries() { # WORK
  local jar lib libs
  jar=$(ls "$here"/java/usertrace/target/usertrace-*.jar 2>/dev/null | grep -v -e '-sources\.jar$' -e '-javadoc\.jar$' | head -1 || true)
  [ -n "$jar" ] || { echo "no API jar in $here/java/usertrace/target" >&2; return 1; }
  libs=$(unzip -Z1 "$jar" | grep '\.so$') || { echo "no library in $jar" >&2; return 1; }
  for lib in $libs; do
    mkdir -p "$1/$(dirname "$lib")" && unzip -p "$jar" "$lib" >"$1/$lib" || return 1
    echo "$lib"
  done
}

# Runs CHECK (a function: LIBRARY-IN-JAR FILE) on each library the API jar
# ships, and reports it as the check NAME.
check_shipped_libraries() { # NAME CHECK
  local work rc=0 out
  work=$(mktemp -d /tmp/usertrace-java-libraries.XXXXXX)
  out=$({
    libs=$(extract_shipped_libraries "$work") || exit 1
    for lib in $libs; do
      "$2" "$lib" "$work/$lib" || exit 1
    done
  } 2>&1) || rc=1
  rm -rf "$work"
  script_result "$1" "$rc" "$out"
}

# The library users load, each one in the API jar, exports the binding's
# native methods (dev.usertrace.internal.Native) and nothing else: no
# benchmark entry point, such as RawWritev's, which take raw addresses and
# check nothing. Those are in the bench jar's own library (bench-native/).
exports_only_the_bindings_native_methods() { # LIBRARY FILE
  local exports others
  exports=$(nm -D --defined-only "$2" | awk '$2 ~ /^[TtWi]$/ {print $3}') || return 1
  echo "$1: $(grep -c '^Java_dev_usertrace_internal_Native_' <<<"$exports") native methods of dev.usertrace.internal.Native"
  grep -q '^Java_dev_usertrace_internal_Native_' <<<"$exports" || { echo "$1 exports no native method of Native"; return 1; }
  others=$(grep -v -e '^Java_dev_usertrace_internal_Native_' -e '^JNI_OnLoad$' -e '^JNI_OnUnload$' <<<"$exports" || true)
  if [ -n "$others" ]; then
    echo "$1 exports functions that are not the binding's:"
    echo "$others"
    return 1
  fi
}

# A JVM unloads a JNI library when the class loader that loaded it is
# collected (an agent extension's, a web application's). Over user_events
# the library's registrar thread lives until the process exits, in its
# code: so each library the API jar ships is marked never to be unloaded.
is_never_unloaded() { # LIBRARY FILE
  local flags
  flags=$(readelf -d "$2" | grep 'FLAGS_1') || true
  echo "$1: ${flags:-no FLAGS_1}"
  grep -q 'NODELETE' <<<"$flags" || { echo "$1 is not linked with -z nodelete"; return 1; }
}

# Sums Surefire/Failsafe XML reports, and this script's checks, into the
# plain summary line; $1 is Maven's exit status: a failed build that failed
# no test counts one failure.
summarize_reports() {
  local rc=$1 passed=$script_passed failed=$script_failed f t fl er sk
  for f in "$here"/java/*/target/surefire-reports/TEST-*.xml "$here"/java/*/target/failsafe-reports/TEST-*.xml; do
    [ -e "$f" ] || continue
    read -r t fl er sk < <(sed -n 's/.*<testsuite[^>]* tests="\([0-9]*\)"[^>]* errors="\([0-9]*\)"[^>]* skipped="\([0-9]*\)"[^>]* failures="\([0-9]*\)".*/\1 \4 \2 \3/p' "$f" | head -1)
    if [ -z "${t:-}" ]; then
      t=$(grep -o 'tests="[0-9]*"' "$f" | head -1 | tr -dc 0-9); fl=$(grep -o 'failures="[0-9]*"' "$f" | head -1 | tr -dc 0-9)
      er=$(grep -o 'errors="[0-9]*"' "$f" | head -1 | tr -dc 0-9); sk=$(grep -o 'skipped="[0-9]*"' "$f" | head -1 | tr -dc 0-9)
    fi
    passed=$((passed + t - fl - er - sk)); failed=$((failed + fl + er))
  done
  if [ "$rc" != 0 ] && [ "$failed" = "$script_failed" ]; then failed=$((failed + 1)); fi
  echo "java: $passed passed, $failed failed"
}

host() {
  rm -rf "$here"/java/*/target/surefire-reports "$here"/java/*/target/failsafe-reports
  # Jars of an earlier build (or layout) must not stand in for this one's.
  rm -f "$here"/java/agent/target/*usertrace-agent*.jar
  local rc=0
  # First the CLI: a host test holds status() and transport() to what
  # `usertrace status` says (-Dusertrace.cli), and the guest run needs it.
  build_cli || rc=1
  # Maven still writes colour resets at exit: strip them, so that the summary is a plain line.
  (cd "$here" && mvn -B -ntp -Dstyle.color=never -Dusertrace.cli="$cli" verify 2>&1) | sed -u $'s/\e\\[[0-9;]*m//g' || rc=$?
  agent_jar_starts_alone
  api_jar_is_a_module_exporting_only_the_api
  api_jar_reads_words_through_the_segment_on_jdk_24_and_later
  check_shipped_libraries shipped_library_exports_only_the_bindings_native_methods exports_only_the_bindings_native_methods
  check_shipped_libraries shipped_library_is_never_unloaded is_never_unloaded
  release_deploys_signed_api_and_agent_and_no_benchmarks_or_test_support
  api_jar_builds_with_jdk_17_alone
  summarize_reports "$rc"
  [ "$rc" = 0 ] && [ "$script_failed" = 0 ]
}

# The test classpath Maven wrote, without the JUnit jars the launcher carries itself.
classpath_of() {
  local m=$1 cp
  cp=$(tr ':' '\n' <"$here/$m/target/test-classpath.txt" | grep -v -e /org/junit/ -e /org/opentest4j/ -e /org/apiguardian/ | paste -sd: -)
  echo "$here/$m/target/test-classes:$here/$m/target/classes${cp:+:$cp}"
}

# Runs the test classes of MODULES with the JUnit console launcher, with
# the tag options in $tags, and prints "java: N passed, M failed".
launch() {
  [ -f "$launcher" ] || { echo "run-tests: $launcher missing: run '$0 host' (or mvn package) first" >&2; echo "java: 0 passed, 1 failed"; return 1; }
  local passed=0 failed=0 rc=0 m out mrc
  for m in "$@"; do
    mrc=0
    out=$(mktemp /tmp/usertrace-java-tests.XXXXXX)
    echo "run-tests: $m (JUnit console launcher, $tags)"
    # On the JVM's own class path (not --class-path), so that tests starting a
    # JVM can hand it java.class.path.
    # shellcheck disable=SC2086 # $tags is a list of launcher options
    java -Dfile.encoding=UTF-8 -Djava.io.tmpdir=/tmp -Dusertrace.agent.jar="$agent_jar" -Dusertrace.cli="$cli" -cp "$launcher:$(classpath_of "$m")" \
      ${java_props:-} org.junit.platform.console.ConsoleLauncher execute \
      --disable-banner --disable-ansi-colors --details=tree $tags --include-classname '.*' \
      --scan-class-path "$here/$m/target/test-classes" --fail-if-no-tests >"$out" 2>&1 || mrc=1
    cat "$out"
    local p f
    p=$(sed -n 's/.*\[ *\([0-9]*\) tests successful *\].*/\1/p' "$out" | tail -1)
    f=$(sed -n 's/.*\[ *\([0-9]*\) tests failed *\].*/\1/p' "$out" | tail -1)
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
    # No summary (the launcher crashed), or a failure that is no test's (a
    # container, e.g. a class that did not initialize): one more failure.
    if [ -z "$p" ] || { [ "$mrc" != 0 ] && [ "${f:-0}" = 0 ]; }; then failed=$((failed + 1)); mrc=1; fi
    [ "$mrc" = 0 ] || rc=1
    rm -f "$out"
  done
  echo "java: $passed passed, $failed failed"
  return $rc
}

guest() {
  tags="--exclude-tag host" launch "${modules[@]}"
}

# The tests that need only `usertrace record` (tagged `recorder`), natively:
# on a host without user_events the emitters take shared memory.
recorder_over_shm() {
  java_props="-Dusertrace.shm=true" tags="--include-tag recorder" launch java/usertrace java/opentelemetry
}

bench() {
  local jar=$here/java/bench/target/benchmarks.jar
  java -Djava.io.tmpdir=/tmp -jar "$jar" -rf text -rff /tmp/usertrace-java-bench.txt "${@}"
}

case "${1:-}" in
  # The host suite checks the path without tracing: tracepoints created
  # disabled with the registration error. On a host without user_events,
  # auto would take shared memory instead, so it is kept to user_events.
  host)
    rc=0
    USERTRACE_TRANSPORT=user_events host || rc=1
    recorder_over_shm || rc=1
    exit $rc ;;
  guest) guest ;;
  guest-from-host)
    (cd "$here" && mvn -B -ntp -q -Dstyle.color=never -DskipTests -DskipITs package)
    build_cli
    cd "$here/.." && harness/in-guest "bash bindings-java/run-tests.sh guest" ;;
  bench) shift; bench "$@" ;;
  *) sed -n '2,15p' "$0" >&2; exit 2 ;;
esac
