package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwokNodeAnnotation marks the nodes that kwok simulates.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// NodeName is the name of the i-th simulated node.
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// registerNodes creates the simulated nodes and waits until each is Ready
// and schedulable (the node lifecycle controller has removed the not-ready
// taint that every new node starts with).
func (c *Cluster) registerNodes(ctx context.Context, opts Options) error {
	clientset, err := c.adminClientset()
	if err != nil {
		return err
	}
	n := max(opts.Nodes, 1)
	for i := range n {
		_, err := clientset.CoreV1().Nodes().Create(ctx, simulatedNode(NodeName(i)), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering node %s: %w", NodeName(i), err)
		}
	}
	kwok := c.Processes[len(c.Processes)-1]
	return waitFor(ctx, kwok, 120*time.Second, func(ctx context.Context) (bool, error) {
		nodes, err := clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, node := range nodes.Items {
			if nodeSchedulable(&node) {
				ready++
			}
		}
		if ready < n {
			return false, fmt.Errorf("%d of %d nodes ready and untainted", ready, n)
		}
		return true, nil
	})
}

func simulatedNode(name string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods:   resource.MustParse("20000"),
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"type": "kwok", "kubernetes.io/hostname": name,
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	kwokKindLabel(n)
	return n
}

func nodeSchedulable(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
