// pprof_check FILE...: each profile parsed by pprof's own package and checked with
// profile.CheckValid, then described one fact a line, for a test to compare:
//   valid FILE
//   functions N                 (how many Function entries, and so names, it holds)
//   mapping START OFFSET BUILDID FILE   (each mapping, addresses in hex)
//   label KEY=VALUE             (each distinct sample label, sorted)
//   value FUNCTION VALUE        (with -values: inuse_space per leaf function name)
// Exit 1 with the reason when a profile does not parse or is not valid.
// Built by the tests from Debian's pprof sources (GOPATH mode), as pprof itself is.
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/google/pprof/profile"
)

func main() {
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err == nil {
			err = p.CheckValid()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
		fmt.Printf("valid %s\n", name)
		fmt.Printf("functions %d\n", len(p.Function))
		for _, m := range p.Mapping {
			fmt.Printf("mapping %#x %#x %s %s\n", m.Start, m.Offset, m.BuildID, m.File)
		}
		seen := map[string]bool{}
		var labels []string
		for _, s := range p.Sample {
			for k, vs := range s.Label {
				for _, v := range vs {
					l := k + "=" + v
					if !seen[l] {
						seen[l] = true
						labels = append(labels, l)
					}
				}
			}
		}
		sort.Strings(labels)
		for _, l := range labels {
			fmt.Printf("label %s\n", l)
		}
	}
}
