// pprof_check FILE...: each profile parsed by pprof's own package and checked with
// profile.CheckValid, then described one fact a line, for a test to compare:
//   valid FILE
//   functions N                 (how many Function entries, and so names, it holds)
//   mapping START OFFSET BUILDID FILE   (each mapping, addresses in hex)
//   label KEY=VALUE             (each distinct sample label, sorted)
//   leaf FUNCTION BYTES         (inuse_space summed per named leaf function, sorted)
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
		inuse := -1
		for i, t := range p.SampleType {
			if t.Type == "inuse_space" {
				inuse = i
			}
		}
		leaf := map[string]int64{}
		for _, s := range p.Sample {
			if inuse < 0 || len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
				continue
			}
			leaf[s.Location[0].Line[0].Function.Name] += s.Value[inuse]
		}
		var names []string
		for n := range leaf {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Printf("leaf %s %d\n", n, leaf[n])
		}
	}
}
