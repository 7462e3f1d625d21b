// Package movecmd holds caravan reassign, which moves integrations and pipes between operators,
// at once or in canary waves.
package movecmd
