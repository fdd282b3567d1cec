// hclfmt checks that each Terraform file named on the command line parses as HCL and is
// already in `terraform fmt` layout: hclwrite.Format, the formatter terraform fmt runs,
// leaves it unchanged. Built in GOPATH mode against Debian's hcl/v2 (nothing fetched).
// Exit status 1 with the first differing line for each file that is not.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

func main() {
	bad := 0
	for _, path := range os.Args[1:] {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Println(err)
			bad++
			continue
		}
		if _, diags := hclwrite.ParseConfig(src, path, hcl.InitialPos); diags.HasErrors() {
			fmt.Printf("%s: %s\n", path, diags.Error())
			bad++
			continue
		}
		formatted := hclwrite.Format(src)
		if bytes.Equal(formatted, src) {
			continue
		}
		bad++
		want := strings.Split(string(formatted), "\n")
		got := strings.Split(string(src), "\n")
		for i := 0; i < len(want) || i < len(got); i++ {
			var w, g string
			if i < len(want) {
				w = want[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if w != g {
				fmt.Printf("%s:%d: not in terraform fmt layout\n  got:  %q\n  want: %q\n", path, i+1, g, w)
				break
			}
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}
