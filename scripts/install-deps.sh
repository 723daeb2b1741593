#!/usr/bin/env bash
# Installs what make needs on a fresh Debian machine; does nothing when it
# is already there.
#
#   install-deps.sh        make test, bench, bench-peers: ZooKeeper 3.8
#                          (Debian's `zookeeper`, which brings Java) and, for
#                          the Curator interoperability tests (curator-x-discovery's
#                          among them) and the bench's
#                          Java peer, Debian's Apache Curator jars and a JDK
#                          (GOCURATOR_NO_CURATOR=1 leaves these two out).
#                          ZooKeeper is needed even with ZK_CONNECT set: the
#                          suite's ensembles, and the Java peer's class path,
#                          are always local. For the bench's kazoo peer (the
#                          queue workload), Debian's python3-kazoo
#                          (GOCURATOR_NO_KAZOO=1 leaves it out; the bench then
#                          marks kazoo unavailable).
#   install-deps.sh demo   make demo: ZooKeeper and Java to start a local
#                          server, or nothing at all when ZK_CONNECT names
#                          an ensemble.
set -euo pipefail

demo=0
case ${1:-} in
  "") ;;
  demo) demo=1 ;;
  *) echo "usage: $0 [demo]" >&2; exit 2 ;;
esac
((demo)) && [[ -n ${ZK_CONNECT:-} ]] && exit 0

need=()
[[ -f /usr/share/java/zookeeper.jar || -n ${ZOOKEEPER_HOME:-} ]] || need+=(zookeeper)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
if ((!demo)) && [[ ${GOCURATOR_NO_CURATOR:-} != 1 ]]; then
  for p in libcurator-recipes-java libcurator-framework-java libcurator-client-java libcurator-discovery-java; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
fi
if ((!demo)) && [[ ${GOCURATOR_NO_KAZOO:-} != 1 ]]; then
  dpkg-query -W -f '${Status}' python3-kazoo 2>/dev/null | grep -q 'install ok installed' || need+=(python3-kazoo)
fi
((${#need[@]} == 0)) && exit 0

sudo=()
[[ $(id -u) == 0 ]] || sudo=(sudo)
echo "installing: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
