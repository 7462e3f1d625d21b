// Package runcmd holds the commands that run and build integrations: run, bind, kit, rebuild,
// deploy and undeploy, promote, delete and reset.
package runcmd
