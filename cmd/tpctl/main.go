// Command tpctl imports evaluation results into the TunePlane platform with
// honest outcome counts and content-hashed protocol evidence.
package main

import "os"

func main() {
	os.Exit(run())
}
