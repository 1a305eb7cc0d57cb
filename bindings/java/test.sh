#!/usr/bin/env bash
# Builds and tests the Java binding against the guardjit that `pkg-config
# guardjit` finds (PKG_CONFIG_PATH; scripts/test_bindings.sh points it, and
# LD_LIBRARY_PATH, at a temporary install prefix):
#   1. CMake builds libguardjit_jni.so into build/cmake (configured afresh:
#      pkg-config's answer is cached per configure and the prefix changes);
#   2. javac compiles the binding, the JUnit 5 tests and the example;
#   3. build/guardjit.jar packs the classes and the JNI library;
#   4. the JUnit console launcher runs the tests on the jar under
#      -Xcheck:jni (any JNI warning fails the script), the JNI library loaded
#      from inside the jar;
#   5. the example runs on examples/mlp.pbtxt, from the jar too;
#   6. mvn.sh builds and tests the same sources with Maven (pom.xml), offline
#      from Debian's /usr/share/maven-repo, packing build/cmake's JNI library
#      (about 15 s; skipped, saying why, without mvn or Debian's plugins, or
#      with GUARDJIT_JAVA_MAVEN=0).
# Needs a JDK 17+ (JAVA_HOME, else the javac on PATH) and the JUnit console
# launcher (JUNIT_CONSOLE_JAR, default Debian's junit5 package).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$here/build
junit=${JUNIT_CONSOLE_JAR:-/usr/share/java/junit-platform-console-standalone.jar}

if [ -z "${JAVA_HOME:-}" ]; then
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
fi
export JAVA_HOME
java=$JAVA_HOME/bin/java
javac=$JAVA_HOME/bin/javac
if ! pkg-config --exists guardjit; then
  echo "bindings/java/test.sh: pkg-config cannot find guardjit (set PKG_CONFIG_PATH)" >&2
  exit 1
fi
[ -f "$junit" ] || { echo "bindings/java/test.sh: no JUnit console launcher at $junit" >&2; exit 1; }

step=$SECONDS
rm -rf "$build/cmake" "$build/classes" "$build/test-classes" "$build/example-classes"
cmake -S "$here" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/cmake" -j1 >/dev/null
echo "java: built libguardjit_jni.so against guardjit $(pkg-config --modversion guardjit) ($((SECONDS - step))s)"

step=$SECONDS
"$javac" --release 17 -Xlint:all -Werror -d "$build/classes" \
  $(find "$here/src/main/java" -name '*.java')
"$javac" --release 17 -Xlint:all,-try -Werror -d "$build/test-classes" \
  -cp "$build/classes:$junit" $(find "$here/src/test/java" -name '*.java')
"$javac" --release 17 -Xlint:all -Werror -d "$build/example-classes" \
  -cp "$build/classes" $(find "$here/examples" -name '*.java')
echo "java: compiled ($((SECONDS - step))s)"

# guardjit.jar: the classes and, as a resource, the JNI library for this
# platform (dev/guardjit/native/linux-<arch>/libguardjit_jni.so), which
# Native unpacks and loads; libguardjit.so stays a system library, found by
# the JNI library's RUNPATH or LD_LIBRARY_PATH.
case "$(uname -m)" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) arch=$(uname -m) ;;
esac
native=$build/jar-resources/dev/guardjit/native/linux-$arch
rm -rf "$build/jar-resources" "$build/guardjit.jar"
mkdir -p "$native"
cp "$build/cmake/libguardjit_jni.so" "$native/"
"$JAVA_HOME/bin/jar" --create --file "$build/guardjit.jar" \
  -C "$build/classes" . -C "$build/jar-resources" .
echo "java: $build/guardjit.jar ($(stat -c %s "$build/guardjit.jar") bytes, JNI library for linux-$arch inside)"

# No java.library.path: the tests and the example load the JNI library from
# the jar (NativeLoadingTest checks it did).
jvm_flags=(-Xcheck:jni "-Dguardjit.examples=$repo/examples" -Dguardjit.test.jniSource=jar)

step=$SECONDS
log=$build/junit.log
set +e
"$java" "${jvm_flags[@]}" -jar "$junit" \
  --class-path "$build/guardjit.jar:$build/test-classes" --scan-class-path \
  --disable-banner --details=summary --details-theme=ascii \
  --fail-if-no-tests 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "java: tests failed" >&2
  exit "$status"
fi
if grep -q "WARNING in native method" "$log"; then
  echo "java: -Xcheck:jni reported a problem (see $log)" >&2
  exit 1
fi
echo "java: tests passed ($((SECONDS - step))s)"

"$java" "${jvm_flags[@]}" -cp "$build/guardjit.jar:$build/example-classes" \
  dev.guardjit.examples.HelloGuardjit "$repo/examples/mlp.pbtxt"

if [ "${GUARDJIT_JAVA_MAVEN:-1}" = 0 ]; then
  echo "java (maven): skipped (GUARDJIT_JAVA_MAVEN=0)"
  exit 0
fi
maven_repo=${MAVEN_REPO:-/usr/share/maven-repo}
missing=()
command -v mvn >/dev/null || missing+=(mvn)
for plugin in maven-resources-plugin/3.3.0 maven-compiler-plugin/3.10.1 \
              maven-surefire-plugin/2.22.3 maven-jar-plugin/3.3.0; do
  [ -d "$maven_repo/org/apache/maven/plugins/$plugin" ] || missing+=("$plugin")
done
[ -d "$maven_repo/org/apache/maven/surefire/surefire-junit-platform" ] \
  || missing+=(surefire-junit-platform)
if ((${#missing[@]})); then
  echo "java (maven): skipped, not in $maven_repo: ${missing[*]} (scripts/setup.sh installs them)"
  exit 0
fi
MAVEN_REPO=$maven_repo GUARDJIT_JNI_DIR=$build/cmake bash "$here/mvn.sh"
