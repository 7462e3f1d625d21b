// Package installcmd holds the commands that install and manage operators: install, uninstall,
// upgrade, grant and image push.
package installcmd
