#!/usr/bin/env bash
# Builds the example into service.jar (against the API jar) and runs it with
# the agent. Build the binding first: (cd bindings-java && mvn -q package -DskipTests)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jars=$here/../../bindings-java/java
api=$jars/usertrace/target/usertrace-0.1.0.jar
agent=$jars/agent/target/usertrace-agent.jar
out=${TMPDIR:-/tmp}/usertrace-example-java
mkdir -p "$out/classes"
javac -d "$out/classes" -cp "$api" "$here/Service.java"
printf 'Main-Class: Service\nClass-Path: %s\n' "$api" >"$out/manifest.txt"
jar --create --file "$out/service.jar" --manifest "$out/manifest.txt" -C "$out/classes" .
# The command line of the issue: the agent forwards GC, GC pauses, exceptions and JUL records.
exec java -javaagent:"$agent"=verbose=true -jar "$out/service.jar" "$@"
