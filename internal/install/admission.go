package install

import (
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// The API server itself enforces who may assign work to which operator
// (docs/architecture.md, Authorisation), with admission policies and no webhook:
//   - AssignmentPolicy: setting or changing the operator-id annotation
//     needs the verb use on integrationoperators/<id>;
//   - NamespacesPolicy, bound once per operator: an operator limited to
//     some namespaces is refused resources from the others;
//   - LabelPolicy: the annotation is mirrored into the label at once, so
//     the new owner's label-filtered watch sees a move immediately (and
//     operators other than the default one need no watch of the whole
//     cluster to mirror it);
//   - DefaultPolicy: an unassigned resource is stamped with the default
//     operator's id, and so is judged by AssignmentPolicy against it; so
//     is a change that removes a resource's assignment (no assignment
//     means the default operator's, and the resource would otherwise keep
//     its previous owner's label with no owner acting on it);
//   - ConfinementPolicy: an operator's own identity may write only its
//     share, and OrphanMarkPolicy: only the default operator marks
//     another operator's orphans (see confinement.go).
const (
	AssignmentPolicy = "caravan-operator-assignment"
	NamespacesPolicy = "caravan-operator-namespaces"
	LabelPolicy      = "caravan-operator-label"
	DefaultPolicy    = "caravan-operator-default"
	// DefaultLabel marks the default operator's IntegrationOperator, the
	// parameter of DefaultPolicy.
	DefaultLabel = "caravan.dev/default"
)

// assignable are the resources users assign to operators: the ones an
// operator acts on by their assignment. (Builds too: an operator runs a
// build assigned to it, with its registry's credentials.)
var assignable = []string{"integrations", "pipes", "kameletbindings", "integrationkits", "builds"}

// LabelMirroredResources are the resources whose operator-id label
// LabelPolicy mirrors: the assignable ones, and Kamelets, which are
// assigned to an operator to be cached by it.
var LabelMirroredResources = append(slices.Clone(assignable), "kamelets")

const (
	assigned = `has(object.metadata.annotations) && 'camel.apache.org/operator.id' in object.metadata.annotations` +
		` && object.metadata.annotations['camel.apache.org/operator.id'] != ''`
	wasAssigned = `has(oldObject.metadata.annotations) && 'camel.apache.org/operator.id' in oldObject.metadata.annotations` +
		` && oldObject.metadata.annotations['camel.apache.org/operator.id'] != ''`
	assignmentChanged = `request.operation == 'CREATE' || !has(oldObject.metadata.annotations)` +
		` || !('camel.apache.org/operator.id' in oldObject.metadata.annotations)` +
		` || oldObject.metadata.annotations['camel.apache.org/operator.id'] != object.metadata.annotations['camel.apache.org/operator.id']`
	labelDiffers = `!has(object.metadata.labels) || !('camel.apache.org/operator.id' in object.metadata.labels)` +
		` || object.metadata.labels['camel.apache.org/operator.id'] != object.metadata.annotations['camel.apache.org/operator.id']`
	mayUse = `authorizer.group('camel.apache.org').resource('integrationoperators')` +
		`.namespace(object.metadata.namespace).name(variables.id).check('use').allowed()`
	mayUseMessage = `'assigning ' + request.kind.kind + ' ' + object.metadata.name + ' to operator ' + variables.id +
		' needs the verb use on integrationoperators/' + variables.id + ' (group camel.apache.org), which ' +
		request.userInfo.username + ' lacks in namespace ' + object.metadata.namespace +
		': ask for a RoleBinding to the ClusterRole ' + variables.id + '-operator-user'`
	servesNamespace = `!(` + assigned + ` && object.metadata.annotations['camel.apache.org/operator.id'] == params.metadata.name)` +
		` || !has(params.spec) || !has(params.spec.watchNamespaces) || size(params.spec.watchNamespaces) == 0` +
		` || object.metadata.namespace in params.spec.watchNamespaces`
	servesNamespaceMessage = `'operator ' + params.metadata.name + ' serves only the namespaces ' +
		params.spec.watchNamespaces.join(', ') + ', not ' + object.metadata.namespace`
)

func rules(ops ...admissionv1.OperationType) *admissionv1.MatchResources {
	return rulesFor(assignable, ops...)
}

func rulesFor(resources []string, ops ...admissionv1.OperationType) *admissionv1.MatchResources {
	return &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule: admissionv1.Rule{APIGroups: []string{camelv1.GroupVersion.Group},
				APIVersions: []string{"*"}, Resources: slices.Clone(resources)},
		},
	}}}
}

func operatorParam() *admissionv1.ParamKind {
	return &admissionv1.ParamKind{APIVersion: camelv1alpha1.GroupVersion.String(), Kind: "IntegrationOperator"}
}

// admissionManifests are the policies shared by every operator, and, for
// an operator limited to some namespaces, the binding of NamespacesPolicy
// to its id. An operator of every namespace gets no binding: it refuses
// nothing, and each binding is work for the API server on every write of
// an assignable resource.
func admissionManifests(c Config) []client.Object {
	objs := sharedAdmissionManifests()
	if len(c.WatchNamespaces) > 0 {
		objs = append(objs, namespacesBinding(c.ID))
	}
	return objs
}

// sharedAdmissionManifests are the policies shared by every operator.
func sharedAdmissionManifests() []client.Object {
	vap := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
	return []client.Object{
		&admissionv1.ValidatingAdmissionPolicy{
			TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"), ObjectMeta: vap(AssignmentPolicy),
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy:    ptr.To(admissionv1.Fail),
				MatchConstraints: rules(admissionv1.Create, admissionv1.Update),
				MatchConditions: []admissionv1.MatchCondition{
					{Name: "assigned", Expression: assigned}, {Name: "assignment-set-or-changed", Expression: assignmentChanged},
				},
				Variables: []admissionv1.Variable{{Name: "id", Expression: `object.metadata.annotations['camel.apache.org/operator.id']`}},
				Validations: []admissionv1.Validation{{Expression: mayUse, MessageExpression: mayUseMessage,
					Reason: ptr.To(metav1.StatusReasonForbidden)}},
			},
		},
		denyBinding(vap(AssignmentPolicy), AssignmentPolicy, nil),
		&admissionv1.ValidatingAdmissionPolicy{
			TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"), ObjectMeta: vap(NamespacesPolicy),
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail), ParamKind: operatorParam(),
				MatchConstraints: rules(admissionv1.Create, admissionv1.Update),
				Validations: []admissionv1.Validation{{Expression: servesNamespace, MessageExpression: servesNamespaceMessage,
					Reason: ptr.To(metav1.StatusReasonForbidden)}},
			},
		},
		confinementPolicy(),
		confinementBinding(),
		orphanMarkPolicy(),
		orphanMarkBinding(),
		&admissionv1.MutatingAdmissionPolicy{
			TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"), ObjectMeta: vap(LabelPolicy),
			Spec: admissionv1.MutatingAdmissionPolicySpec{
				FailurePolicy:      ptr.To(admissionv1.Fail),
				MatchConstraints:   rulesFor(LabelMirroredResources, admissionv1.Create, admissionv1.Update),
				ReinvocationPolicy: admissionv1.IfNeededReinvocationPolicy,
				MatchConditions: []admissionv1.MatchCondition{
					{Name: "assigned", Expression: assigned}, {Name: "label-differs", Expression: labelDiffers},
				},
				Mutations: []admissionv1.Mutation{{PatchType: admissionv1.PatchTypeApplyConfiguration,
					ApplyConfiguration: &admissionv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: ` +
						`{'camel.apache.org/operator.id': object.metadata.annotations['camel.apache.org/operator.id']}}}`}}},
			},
		},
		&admissionv1.MutatingAdmissionPolicyBinding{
			TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"),
			ObjectMeta: vap(LabelPolicy),
			Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: LabelPolicy},
		},
		&admissionv1.MutatingAdmissionPolicy{
			TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy"), ObjectMeta: vap(DefaultPolicy),
			Spec: admissionv1.MutatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail), ParamKind: operatorParam(),
				MatchConstraints:   rules(admissionv1.Create, admissionv1.Update),
				ReinvocationPolicy: admissionv1.IfNeededReinvocationPolicy,
				MatchConditions: []admissionv1.MatchCondition{
					{Name: "unassigned", Expression: "!(" + assigned + ")"},
					{Name: "created-or-assignment-removed", Expression: `request.operation == 'CREATE' || (` + wasAssigned + `)`},
				},
				Mutations: []admissionv1.Mutation{{PatchType: admissionv1.PatchTypeApplyConfiguration,
					ApplyConfiguration: &admissionv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{` +
						`annotations: {'camel.apache.org/operator.id': params.metadata.name}, ` +
						`labels: {'camel.apache.org/operator.id': params.metadata.name}}}`}}},
			},
		},
		&admissionv1.MutatingAdmissionPolicyBinding{
			TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding"),
			ObjectMeta: vap(DefaultPolicy),
			Spec: admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: DefaultPolicy,
				ParamRef: &admissionv1.ParamRef{
					Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{DefaultLabel: "true"}},
					ParameterNotFoundAction: ptr.To(admissionv1.AllowAction),
				}},
		},
	}
}

// AdmissionPolicies are the admission policies that `caravan install`
// installs, with the namespaces binding of each of ids: what a cluster
// whose operators were installed by it enforces.
func AdmissionPolicies(ids ...string) []client.Object {
	if len(ids) == 0 {
		return nil
	}
	objs := sharedAdmissionManifests()
	for _, id := range ids {
		objs = append(objs, namespacesBinding(id))
	}
	return objs
}

// namespacesBinding applies NamespacesPolicy with operator id's
// IntegrationOperator as parameter; the policy judges only the resources
// assigned to id. (An object selector on the label would not do: it sees
// the object before LabelPolicy mirrors the label.)
func namespacesBinding(id string) *admissionv1.ValidatingAdmissionPolicyBinding {
	return denyBinding(metav1.ObjectMeta{Name: NamespacesPolicy + "-" + id, Labels: Labels(id)}, NamespacesPolicy,
		&admissionv1.ParamRef{Name: id, ParameterNotFoundAction: ptr.To(admissionv1.AllowAction)})
}
