// Command server is the kubelet node tests' pod: it answers with its pod's name, fetches a URL
// on request (to show what a pod reaches), and can hold memory (to meet its limit).
package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	if mb, _ := strconv.Atoi(os.Getenv("HOLD_MB")); mb > 0 {
		held := make([]byte, mb<<20)
		for i := range held {
			held[i] = byte(i)
		}
		log.Printf("holding %d MiB", mb)
		defer fmt.Fprint(io.Discard, held[len(held)-1])
	}
	name, _ := os.Hostname()
	client := &http.Client{Timeout: 10 * time.Second,
		// The API server's certificate is the local cluster's own; this pod shows it is reached.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "pod %s\n", name) })
	http.HandleFunc("/get", func(w http.ResponseWriter, r *http.Request) {
		resp, err := client.Get(r.URL.Query().Get("url"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Fprintf(w, "%d %s", resp.StatusCode, body)
	})
	log.Printf("pod %s serving on :8080", name)
	log.Fatal(http.ListenAndServe(":8080", nil))
}
