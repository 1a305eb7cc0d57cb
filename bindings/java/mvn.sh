#!/usr/bin/env bash
# Builds and tests the Java binding with Maven (pom.xml), offline, from
# Debian's Maven repository (/usr/share/maven-repo, MAVEN_REPO to change it):
#   mvn -o -q -Dmaven.repo.local=/usr/share/maven-repo \
#       -Dguardjit.native.dir=build/cmake package
# compiles src/main/java and src/test/java, runs the 63 JUnit 5 tests through
# surefire under -Xcheck:jni (any JNI warning fails this script) and packs
# build/maven/guardjit.jar with the JNI library inside, as test.sh's jar.
# The JNI library is CMake's: GUARDJIT_JNI_DIR (default build/cmake, where
# test.sh builds it) must hold libguardjit_jni.so, and libguardjit.so must be
# found by its RUNPATH or LD_LIBRARY_PATH. Extra arguments go to mvn.
# Needs the Debian packages maven, libmaven-resources-plugin-java,
# libmaven-compiler-plugin-java, libsurefire-java, libmaven-jar-plugin-java
# and junit5 (scripts/setup.sh installs them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo_local=${MAVEN_REPO:-/usr/share/maven-repo}
native=${GUARDJIT_JNI_DIR:-$here/build/cmake}
mvn=${MVN:-mvn}

command -v "$mvn" >/dev/null || { echo "bindings/java/mvn.sh: no mvn on PATH" >&2; exit 1; }
[ -f "$native/libguardjit_jni.so" ] || {
  echo "bindings/java/mvn.sh: no libguardjit_jni.so in $native (run test.sh, or set GUARDJIT_JNI_DIR)" >&2
  exit 1
}
if [ -z "${JAVA_HOME:-}" ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
fi
export JAVA_HOME

step=$SECONDS
reports=$here/build/maven/surefire-reports
rm -rf "$here/build/maven"
# C1 only: Maven's own JVM is short-lived (about 3 s of a 15 s run saved).
# sed drops the stray colour resets Debian's Maven 3.8 prints even with -q -B.
MAVEN_OPTS=${MAVEN_OPTS:--XX:TieredStopAtLevel=1} \
  "$mvn" -o -q -B -Dstyle.color=never -f "$here/pom.xml" "-Dmaven.repo.local=$repo_local" \
  "-Dguardjit.native.dir=$native" "$@" package 2>&1 | sed 's/\x1b\[0m//g'
# The forked JVM's native stdout/stderr (where -Xcheck:jni and guardjit's
# log write) land in surefire's .dumpstream files.
if [ -d "$reports" ] && grep -l "WARNING in native method" "$reports"/*.dumpstream 2>/dev/null; then
  echo "java (maven): -Xcheck:jni reported a problem (see the files above)" >&2
  exit 1
fi
jar=$here/build/maven/guardjit.jar
if ! "$JAVA_HOME/bin/jar" --list --file "$jar" | grep -q '^dev/guardjit/native/[^/]*/libguardjit_jni.so$'; then
  echo "java (maven): $jar lacks the JNI library" >&2
  exit 1
fi
tests=$(cat "$reports"/TEST-*.xml 2>/dev/null | grep -o '<testcase ' | wc -l)
echo "java (maven): $jar ($(stat -c %s "$jar") bytes), $tests tests passed ($((SECONDS - step))s)"
