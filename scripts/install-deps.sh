#!/usr/bin/env bash
# Installs what the demo and the tests need on a fresh Debian machine:
# ZooKeeper 3.8 (Debian's `zookeeper`, which brings Java) and, for the
# Curator interoperability tests, Debian's Apache Curator jars.
# Does nothing when they are already there.
set -euo pipefail

need=()
[[ -f /usr/share/java/zookeeper.jar || -n ${ZOOKEEPER_HOME:-} || -n ${ZK_CONNECT:-} ]] || need+=(zookeeper)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
if [[ ${GOCURATOR_NO_CURATOR:-} != 1 ]]; then
  for p in libcurator-recipes-java libcurator-framework-java libcurator-client-java; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
fi
((${#need[@]} == 0)) && exit 0

sudo=()
[[ $(id -u) == 0 ]] || sudo=(sudo)
echo "installing: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
