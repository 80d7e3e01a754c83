// million.go: the peer of bench/million.cpp: N goroutines alive at once, each blocked on a
// channel, in a fresh round and a reused one (the goroutines of the first are on the runtime's
// free list by then). Prints one line of key=value as `million --one` does: the resident memory
// per blocked goroutine (VmRSS growth / N, KiB), the page tables per goroutine (VmPTE), and
// the time per goroutine from the first `go` to the last finish (ns), wall and CPU.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A field of /proc/self/status in KiB.
func statusKiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := s.Text(); strings.HasPrefix(line, field+":") {
			rest := strings.TrimSuffix(line[len(field)+1:], "kB")
			v, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return v
		}
	}
	return -1
}

type round struct {
	ns, cpuNs     float64
	rssKiB, pteKB int64
}

// The process's CPU time (user + system, every thread), in ns.
func cpuNs() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(n int) round {
	release := make(chan struct{})
	var waiting, done sync.WaitGroup
	waiting.Add(n)
	done.Add(n)
	rss0, pte0 := statusKiB("VmRSS"), statusKiB("VmPTE")
	t0, c0 := time.Now(), cpuNs()
	for i := 0; i < n; i++ {
		go func() {
			waiting.Done()
			<-release
			done.Done()
		}()
	}
	waiting.Wait()
	r := round{rssKiB: statusKiB("VmRSS") - rss0, pteKB: statusKiB("VmPTE") - pte0}
	close(release)
	done.Wait()
	r.ns = float64(time.Since(t0).Nanoseconds())
	r.cpuNs = cpuNs() - c0
	return r
}

func main() {
	count := flag.Int("count", 1000000, "goroutines")
	flag.Parse()
	runtime.GC()
	fresh := run(*count)
	reused := run(*count)
	n := float64(*count)
	fmt.Printf("reached=%d fresh_ns=%.1f reused_ns=%.1f fresh_cpu_ns=%.1f reused_cpu_ns=%.1f "+
		"rss_kib=%.3f pte_kib=%.3f gomaxprocs=%d\n", *count, fresh.ns/n, reused.ns/n,
		fresh.cpuNs/n, reused.cpuNs/n, float64(fresh.rssKiB)/n, float64(fresh.pteKB)/n,
		runtime.GOMAXPROCS(0))
}
