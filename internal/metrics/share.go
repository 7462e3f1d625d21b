package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
	"github.com/caravan-dev/caravan/internal/ownership"
)

// shareCollector reports, at each scrape, what the operator's cache holds
// and how much of it the operator owns. The default operator also counts
// the resources assigned to an id that no operator registered.
type shareCollector struct {
	cache      client.Reader
	metaCache  client.Reader
	operatorID string
	isDefault  func() bool

	cached, owned, unregistered *prometheus.Desc
}

// NewClusterWatch returns the gauge caravan_cluster_watch of operatorID,
// which asks watching at each scrape.
func NewClusterWatch(operatorID string, watching func() bool) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "caravan_cluster_watch",
		Help: "1 when this operator watches the metadata of every assignable resource of the cluster " +
			"(the default operator, or every operator when the API server does not mirror the operator-id label), else 0.",
		ConstLabels: prometheus.Labels{"operator_id": operatorID},
	}, func() float64 {
		if watching() {
			return 1
		}
		return 0
	})
}

// NewShareCollector returns the collector; cache is the operator's own
// (label-filtered) cache, metaCache the unfiltered metadata cache, which
// also holds every registration.
func NewShareCollector(cache, metaCache client.Reader, operatorID string, isDefault func() bool) prometheus.Collector {
	constLabels := prometheus.Labels{"operator_id": operatorID}
	return &shareCollector{
		cache: cache, metaCache: metaCache, operatorID: operatorID, isDefault: isDefault,
		cached: prometheus.NewDesc("caravan_cached_objects",
			"Objects in the operator's informer cache, by kind.", []string{"kind"}, constLabels),
		owned: prometheus.NewDesc("caravan_owned_resources",
			"Resources assigned to this operator, by kind.", []string{"kind"}, constLabels),
		unregistered: prometheus.NewDesc("caravan_orphaned_resources",
			"Resources whose operator is not registered, not live, or does not serve their namespace, by kind and reason (reported by the default operator).",
			[]string{"kind", "reason"}, constLabels),
	}
}

// Describe sends the descriptions of the share's gauges.
func (c *shareCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.cached
	ch <- c.owned
	ch <- c.unregistered
}

// Collect counts the share from the cache at each scrape.
func (c *shareCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lists := map[string]client.ObjectList{
		"Integration": &camelv1.IntegrationList{}, "IntegrationKit": &camelv1.IntegrationKitList{},
		"Build": &camelv1.BuildList{}, "Pipe": &camelv1.PipeList{},
		"KameletBinding": &camelv1alpha1.KameletBindingList{}, "Deployment": &appsv1.DeploymentList{},
		"ConfigMap": &corev1.ConfigMapList{}, "Service": &corev1.ServiceList{},
	}
	for kind, list := range lists {
		if err := c.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			continue
		}
		owned := 0
		for _, item := range items {
			if o, ok := item.(metav1.Object); ok && o.GetAnnotations()[camelv1.OperatorIDAnnotation] == c.operatorID {
				owned++
			}
		}
		ch <- prometheus.MustNewConstMetric(c.cached, prometheus.GaugeValue, float64(len(items)), kind)
		if kind != "Deployment" && kind != "ConfigMap" && kind != "Service" {
			ch <- prometheus.MustNewConstMetric(c.owned, prometheus.GaugeValue, float64(owned), kind)
		}
	}
	if c.isDefault() {
		c.collectUnregistered(ctx, ch)
	}
}

func (c *shareCollector) collectUnregistered(ctx context.Context, ch chan<- prometheus.Metric) {
	iops := &camelv1alpha1.IntegrationOperatorList{}
	if err := c.metaCache.List(ctx, iops, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	registered := map[string]*camelv1alpha1.IntegrationOperator{}
	for i := range iops.Items {
		registered[iops.Items[i].Name] = &iops.Items[i]
	}
	now := time.Now()
	for _, gvk := range []schema.GroupVersionKind{
		camelv1.GroupVersion.WithKind("Integration"), camelv1.GroupVersion.WithKind("Pipe"),
		camelv1alpha1.GroupVersion.WithKind("KameletBinding"),
	} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.metaCache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		counts := map[string]int{
			ownership.ReasonNotRegistered: 0, ownership.ReasonHeartbeatStale: 0, ownership.ReasonNotServingNamespace: 0,
		}
		for _, item := range list.Items {
			id := ownership.AssignedID(item.Annotations)
			if id == "" {
				continue
			}
			if reason, _ := ownership.Orphaned(id, item.Namespace, registered[id], now); reason != "" {
				counts[reason]++
			}
		}
		for reason, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.unregistered, prometheus.GaugeValue, float64(n), gvk.Kind, reason)
		}
	}
}
