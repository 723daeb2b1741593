package main

import "slices"

// job is one workload at one K (or W), run once per round by each of its peers.
type job struct {
	workload string
	clients  int
	peers    []string
	// variant: the curator peer's recipe in a cache workload (CuratorCache
	// or TreeCache: one job each, gocurator's Cache in both, so that each
	// row compares runs interleaved with each other); "" elsewhere.
	variant string
}

// cacheVariants are the curator peer's caches the cache workloads compare
// gocurator's Cache with: Curator 5's CuratorCache (on a ZooKeeper 3.6+
// client it runs on one persistent recursive watch) and the classic
// TreeCache (standard watches, as ours).
var cacheVariants = []string{"CuratorCache", "TreeCache"}

func isCacheWorkload(w string) bool { return w == "cacheload" || w == "cachelag" }

// supports tells whether a peer has the recipe a workload needs.
func supports(peer, workload string) bool {
	if peer == "kazoo" {
		return workload == "queue" // a peer of the queue workload alone (issue 42)
	}
	switch workload {
	case "semaphore", "rwlock", "atomic":
		return peer != "gozk" // go-zookeeper has only zk.Lock
	case "queue":
		return peer != "gozk"
	case "cacheload", "cachelag":
		return peer != "gozk" // and no cache
	case discoveryQuery, discoveryLag:
		return peer != "gozk" // and no service discovery
	}
	return true
}

func isGoPeer(p string) bool { _, ok := goLibraries[p]; return ok }

// cpuK is the contended run whose CPU per acquisition the cpu rows show.
func cpuK(c *config) int {
	if slices.Contains(c.ks, 4) || len(c.ks) == 0 {
		return 4
	}
	return c.ks[0]
}

// plan lists the jobs of one round, in order. The cpu workload is the CPU
// per acquisition of the uncontended and the K=4 contended runs (measured
// around their timed part), so it adds those runs when they are not there.
func plan(c *config) []job {
	want := func(w string) bool { return slices.Contains(c.workloads, w) }
	var jobs []job
	addVariant := func(workload string, clients int, goOnly bool, variant string) {
		for _, j := range jobs {
			if j.workload == workload && j.clients == clients && j.variant == variant {
				return
			}
		}
		j := job{workload: workload, clients: clients, variant: variant}
		for _, p := range c.peers {
			if supports(p, workload) && (!goOnly || isGoPeer(p)) {
				j.peers = append(j.peers, p)
			}
		}
		if len(j.peers) > 0 {
			jobs = append(jobs, j)
		}
	}
	add := func(workload string, clients int, goOnly bool) { addVariant(workload, clients, goOnly, "") }
	if want("uncontended") || want("cpu") {
		add("uncontended", 1, false)
	}
	for _, w := range []string{"contended", "semaphore", "rwlock", "atomic"} {
		if want(w) {
			for _, k := range c.ks {
				add(w, k, false)
			}
		}
	}
	if want("processes") {
		for _, k := range c.procs {
			add("processes", k, false)
		}
	}
	if want("cpu") {
		add("contended", cpuK(c), false)
	}
	if want("waiters") {
		for _, w := range c.ws {
			add("waiters", w, false)
		}
		for _, w := range c.wsGo {
			add("waiters", w, true)
		}
	}
	// Without the curator peer one job is enough: gocurator's Cache alone.
	variants := []string{""}
	if slices.Contains(c.peers, "curator") {
		variants = cacheVariants
	}
	for _, w := range []string{"cacheload", "cachelag"} {
		if want(w) {
			for _, v := range variants {
				addVariant(w, 1, false, v)
			}
		}
	}
	if want("queue") {
		for _, k := range c.ks {
			for _, v := range queueVariants {
				addVariant("queue", k, false, v)
			}
		}
	}
	for _, w := range discoveryWorkloads { // "K": the service's instances
		if want(w) {
			add(w, c.instances, false)
		}
	}
	return jobs
}
