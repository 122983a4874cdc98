package patch_test

import (
	"fmt"

	"github.com/kodustech/kodyls/analysis/patch"
)

func ExampleFilePatch_Render() {
	base := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\ta := 1\n\tb := 3\n\tfmt.Println(a, b)\n}\n"
	current := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\ta := 1\n\tb := 2\n\tc := a + b\n\tfmt.Println(a, b, c)\n}\n"
	p := patch.Diff("x.go", base, current, 2)
	fmt.Print(p.Render())
	fmt.Println(p.ChangedLines())
	// Output:
	// ## file: 'x.go'
	//
	// @@ -5,5 +5,6 @@ func main() {
	// __new hunk__
	// 5  func main() {
	// 6  	a := 1
	// 7 +	b := 2
	// 8 +	c := a + b
	// 9 +	fmt.Println(a, b, c)
	// 10  }
	// __old hunk__
	//  func main() {
	//  	a := 1
	// -	b := 3
	// -	fmt.Println(a, b)
	//  }
	// [7 8 9]
}
