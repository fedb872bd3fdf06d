// Command oracle runs allocation cases through the upstream Kubernetes DRA allocator
// (k8s.io/dynamic-resource-allocation/structured, the code kube-scheduler links) and prints
// upstream's answers, so that dratwin's allocator can be compared with it.
//
// Input is the allocator conformance case format (a YAML file per case, see
// conformance/README.md): case files or folders as arguments, or a stream of cases as JSON
// lines (-jsonl FILE, "-" for standard input). Output is one JSON line per case, in input order:
//
//	{"name": ..., "variant": "incubating", "answers": {"stable": ..., "incubating": ...}}
//
// "variant" is the allocator that structured.NewAllocator picks for the case's features;
// "answers" holds the answer of every variant that supports them, in the JSON shape of
// `dratwin allocate -o json`, plus "steps" (the allocator's own search-step counter) and
// "seconds". The stable variant visits pools in Go map order, which is random: it is run
// several times with its pools presented in different orders, and when the answers differ it
// is marked "orderDependent" with every distinct answer under "alternatives".
//
// `oracle bench` times Allocate on a prepared cluster; see bench.go.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bench" {
		if err := runBench(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "oracle bench: %v\n", err)
			os.Exit(2)
		}
		return
	}
	if err := runCases(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
		os.Exit(2)
	}
}

func runCases(arguments []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("oracle", flag.ContinueOnError)
	flags.Usage = func() {
		fmt.Fprintf(flags.Output(), "usage: oracle [flags] [CASE.yaml|DIR ...]\n"+
			"       oracle bench < SPEC.json\n\n"+
			"Runs allocator cases (conformance format) through the upstream allocator and prints\n"+
			"one JSON line per case. Flags:\n")
		flags.PrintDefaults()
	}
	options := runOptions{}
	jsonl := flags.String("jsonl", "", "read cases as JSON lines from this file (- for standard input)")
	flags.DurationVar(&options.timeout, "timeout", 10*time.Second,
		"bound of one Allocate call, like kube-scheduler's DRASchedulerFilterTimeout")
	flags.IntVar(&options.stableRuns, "stable-runs", 32,
		"how often the stable variant runs per case, with its pools in different orders (it also visits\n\t\t\tpools in Go map order, random each run: fewer runs may miss an answer it can give); the runs of\n\t\t\tone case stop early once they have taken -timeout together")
	workers := flags.Int("j", runtime.GOMAXPROCS(0), "cases run in parallel")
	version := flags.Bool("version", false, "print the upstream module version built in, and exit")
	if err := flags.Parse(arguments); err != nil {
		return err
	}
	if *version {
		_, err := fmt.Fprintln(stdout, moduleVersion())
		return err
	}
	if *jsonl == "" && flags.NArg() == 0 {
		flags.Usage()
		return fmt.Errorf("no input: give case files or folders, or -jsonl FILE")
	}
	cases := make(chan caseInput)
	readErr := make(chan error, 1)
	go func() {
		defer close(cases)
		if *jsonl != "" {
			readErr <- readJSONLines(*jsonl, cases)
		} else {
			readErr <- readCaseFiles(flags.Args(), cases)
		}
	}()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	err := answerAll(cases, max(*workers, 1), options, func(answer caseAnswer) error {
		if err := encoder.Encode(answer); err != nil {
			return err
		}
		return out.Flush()
	})
	if err != nil {
		return err
	}
	return <-readErr
}

// answerAll answers the cases with several workers and emits the answers in input order.
func answerAll(cases <-chan caseInput, workers int, options runOptions, emit func(caseAnswer) error) error {
	type job struct {
		index int
		input caseInput
	}
	type result struct {
		index  int
		answer caseAnswer
	}
	jobs := make(chan job)
	done := make(chan result)
	var running sync.WaitGroup
	for range workers {
		running.Add(1)
		go func() {
			defer running.Done()
			for item := range jobs {
				done <- result{item.index, answerCase(item.input, options)}
			}
		}()
	}
	go func() {
		index := 0
		for input := range cases {
			jobs <- job{index, input}
			index++
		}
		close(jobs)
		running.Wait()
		close(done)
	}()
	pending := map[int]caseAnswer{}
	next := 0
	var emitErr error
	for item := range done {
		pending[item.index] = item.answer
		for answer, ready := pending[next]; ready; answer, ready = pending[next] {
			delete(pending, next)
			next++
			if emitErr == nil {
				emitErr = emit(answer)
			}
		}
	}
	return emitErr
}
