package install

import (
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	camelv1 "github.com/caravan-dev/caravan/api/v1"
	camelv1alpha1 "github.com/caravan-dev/caravan/api/v1alpha1"
)

// The API server itself enforces who may assign work to which operator, with
// admission policies and no webhook (docs/architecture.md, Authorisation). The
// policies are:
//   - AssignmentPolicy: setting or changing the operator-id annotation
//     needs the verb use on integrationoperators/<id>;
//   - NamespacesPolicy: an operator limited to some namespaces is refused
//     resources from the others (by the RBAC grants of NamespacesGrants);
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
//     share, OrphanMarkPolicy: only the default operator marks another
//     operator's orphans, and ForeignConfinementPolicy: an operator that
//     is not Caravan's writes nothing a Caravan operator owns (see
//     confinement.go).
const (
	AssignmentPolicy = "caravan-operator-assignment"
	NamespacesPolicy = "caravan-operator-served-namespaces"
	LabelPolicy      = "caravan-operator-label"
	DefaultPolicy    = "caravan-operator-default"
	// DefaultUsePolicy stands in for DefaultPolicy where no MutatingAdmissionPolicy is served: an
	// unassigned resource, which the default operator takes, needs the verb use on it.
	DefaultUsePolicy = "caravan-operator-default-use"
	// LabelGuardPolicy stands in for LabelPolicy where no MutatingAdmissionPolicy is served. The
	// operators then mirror the operator-id label themselves, and the policy lets it name only
	// the operator the resource is assigned to, or stay as it was.
	LabelGuardPolicy = "caravan-operator-label-guard"
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
	// theOperator is the authorizer of the principal that stands for the
	// operator the object is assigned to (NamespacesPrincipal).
	theOperator = `authorizer.serviceAccount('` + NamespacesPrincipal + `', variables.id)` +
		`.group('camel.apache.org').resource('integrationoperators')`
	// validName: the assignment names an operator that can exist (its
	// name is a DNS subdomain, as a ServiceAccount's is).
	validName       = `size(variables.id) <= 253 && variables.id.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')`
	limited         = validName + ` && ` + theOperator + `.name(variables.id).check('limit').allowed()`
	servesNamespace = `!variables.limited || ` + theOperator +
		`.namespace(object.metadata.namespace).name(variables.id).check('serve').allowed()`
	servesNamespaceMessage = `'operator ' + variables.id + ' does not serve namespace ' + object.metadata.namespace +
		': it is limited to the namespaces it was installed to watch (kubectl get integrationoperator ' + variables.id +
		' -o jsonpath={.spec.watchNamespaces})'`
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
// an operator limited to some namespaces, its NamespacesGrants.
func admissionManifests(c Config) []client.Object {
	shared := sharedAdmissionManifests()
	if c.ValidatingOnly {
		shared = ValidatingOnlyAdmissionPolicies()
	}
	return append(shared, NamespacesGrants(c)...)
}

// validatingOnly keeps the objects of objs that are no MutatingAdmissionPolicy or binding of one.
func validatingOnly(objs []client.Object) []client.Object {
	return slices.DeleteFunc(objs, func(o client.Object) bool {
		switch o.(type) {
		case *admissionv1.MutatingAdmissionPolicy, *admissionv1.MutatingAdmissionPolicyBinding:
			return true
		}
		return false
	})
}

// defaultUsePolicy is DefaultUsePolicy and its binding: creating an unassigned resource, or
// removing a resource's assignment, needs the verb use on the default operator, the parameter.
func defaultUsePolicy() []client.Object {
	return []client.Object{
		&admissionv1.ValidatingAdmissionPolicy{
			TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"), ObjectMeta: metav1.ObjectMeta{Name: DefaultUsePolicy},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail), ParamKind: operatorParam(),
				MatchConstraints: rules(admissionv1.Create, admissionv1.Update),
				MatchConditions: []admissionv1.MatchCondition{
					{Name: "unassigned", Expression: "!(" + assigned + ")"},
					{Name: "created-or-assignment-removed", Expression: `request.operation == 'CREATE' || (` + wasAssigned + `)`},
				},
				Variables: []admissionv1.Variable{{Name: "id", Expression: `params.metadata.name`}},
				Validations: []admissionv1.Validation{{Expression: mayUse, MessageExpression: mayUseMessage,
					Reason: ptr.To(metav1.StatusReasonForbidden)}},
			},
		},
		&admissionv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: DefaultUsePolicy},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: DefaultUsePolicy,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				ParamRef: &admissionv1.ParamRef{
					Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{DefaultLabel: "true"}},
					ParameterNotFoundAction: ptr.To(admissionv1.AllowAction),
				}},
		},
	}
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
				FailurePolicy:    ptr.To(admissionv1.Fail),
				MatchConstraints: rules(admissionv1.Create, admissionv1.Update),
				MatchConditions:  []admissionv1.MatchCondition{{Name: "assigned", Expression: assigned}},
				Variables: []admissionv1.Variable{
					{Name: "id", Expression: `object.metadata.annotations['camel.apache.org/operator.id']`},
					{Name: "limited", Expression: limited},
				},
				Validations: []admissionv1.Validation{{Expression: servesNamespace, MessageExpression: servesNamespaceMessage,
					Reason: ptr.To(metav1.StatusReasonForbidden)}},
			},
		},
		denyBinding(vap(NamespacesPolicy), NamespacesPolicy, nil),
		confinementPolicy(),
		confinementBinding(),
		foreignConfinementPolicy(),
		denyBinding(vap(ForeignConfinementPolicy), ForeignConfinementPolicy, nil),
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
// installs, which every operator shares: what a cluster whose operators
// were installed by it enforces.
func AdmissionPolicies() []client.Object { return sharedAdmissionManifests() }

// ValidatingOnlyAdmissionPolicies are AdmissionPolicies as installed ValidatingOnly.
func ValidatingOnlyAdmissionPolicies() []client.Object {
	return append(append(validatingOnly(sharedAdmissionManifests()), defaultUsePolicy()...), labelGuardPolicy()...)
}

// ValidatingOnlyPolicies name the policies that only a cluster without MutatingAdmissionPolicy
// gets, in the stead of the mutating ones.
var ValidatingOnlyPolicies = []string{DefaultUsePolicy, LabelGuardPolicy}

// labelGuardPolicy is LabelGuardPolicy and its binding. A label that differs from the
// assignment and from what it was would steer which operator's label-filtered watch sees the
// resource: it is refused.
func labelGuardPolicy() []client.Object {
	const (
		label    = `object.metadata.?labels[?'camel.apache.org/operator.id'].orValue('')`
		id       = `object.metadata.?annotations[?'camel.apache.org/operator.id'].orValue('')`
		oldLabel = `oldObject == null ? '' : oldObject.metadata.?labels[?'camel.apache.org/operator.id'].orValue('')`
	)
	return []client.Object{
		&admissionv1.ValidatingAdmissionPolicy{
			TypeMeta: typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"), ObjectMeta: metav1.ObjectMeta{Name: LabelGuardPolicy},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy:    ptr.To(admissionv1.Fail),
				MatchConstraints: rulesFor(LabelMirroredResources, admissionv1.Create, admissionv1.Update),
				Variables: []admissionv1.Variable{{Name: "label", Expression: label}, {Name: "id", Expression: id},
					{Name: "oldLabel", Expression: oldLabel}},
				Validations: []admissionv1.Validation{{
					Expression: `variables.label == '' || variables.label == variables.id || variables.label == variables.oldLabel`,
					MessageExpression: `'the label camel.apache.org/operator.id of ' + request.kind.kind + ' ' + object.metadata.name +
						' may only name the operator it is assigned to (' + (variables.id == '' ? 'none' : variables.id) +
						'), not ' + variables.label + ': the operators keep it equal to the annotation camel.apache.org/operator.id'`,
					Reason: ptr.To(metav1.StatusReasonForbidden)}},
			},
		},
		denyBinding(metav1.ObjectMeta{Name: LabelGuardPolicy}, LabelGuardPolicy, nil),
	}
}

// NamespacesPrincipal is the namespace of the ServiceAccounts that stand
// for operators in NamespacesPolicy. When operator id is limited to some
// namespaces, ServiceAccount <id> of it holds the verb limit on
// integrationoperators/<id> cluster-wide, and the verb serve on it in each
// namespace it watches. No such ServiceAccount needs to exist: the API
// server's authorizer answers for the name from the RBAC bindings alone,
// and only who holds these verbs, or may bind any role, can create such a
// binding. One created under that name could do nothing with them: no API
// acts on these verbs. The policy asks the authorizer, so it takes no
// parameter: the API server evaluates it once per request, however many
// operators there are, where a binding per operator cost one evaluation
// each.
const NamespacesPrincipal = "caravan-served-namespaces"

// LimitedRoleName names the ClusterRole, and its ClusterRoleBinding,
// that mark operator id installed in namespace as limited to some
// namespaces. ServesRoleName names the ClusterRole that its
// RoleBindings of that name grant in each namespace it watches.
func LimitedRoleName(id, namespace string) string { return ClusterRoleName(id, namespace) + ":limited" }

// ServesRoleName: see LimitedRoleName.
func ServesRoleName(id, namespace string) string { return ClusterRoleName(id, namespace) + ":serves" }

// NamespacesGrants are the RBAC objects by which NamespacesPolicy knows
// that the operator of c is limited to the namespaces it watches. There
// are none for an operator of every namespace, or one installed without
// admission.
func NamespacesGrants(c Config) []client.Object {
	if len(c.WatchNamespaces) == 0 || c.SkipAdmission {
		return nil
	}
	principal := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: c.ID, Namespace: NamespacesPrincipal}}
	rule := func(verb string) []rbacv1.PolicyRule {
		return []rbacv1.PolicyRule{{APIGroups: []string{camelv1.GroupVersion.Group},
			Resources: []string{"integrationoperators"}, ResourceNames: []string{c.ID}, Verbs: []string{verb}}}
	}
	limited, serves := LimitedRoleName(c.ID, c.Namespace), ServesRoleName(c.ID, c.Namespace)
	objs := []client.Object{
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: limited, Labels: installationLabels(c)}, Rules: rule("limit")},
		&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: limited, Labels: installationLabels(c)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: limited},
			Subjects:   principal},
		&rbacv1.ClusterRole{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: serves, Labels: installationLabels(c)}, Rules: rule("serve")},
	}
	watched := slices.Sorted(slices.Values(c.WatchNamespaces))
	for _, ns := range slices.Compact(watched) {
		objs = append(objs, &rbacv1.RoleBinding{TypeMeta: typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: serves, Namespace: ns, Labels: installationLabels(c)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: serves},
			Subjects:   principal})
	}
	return objs
}

// legacyNamespacesPolicy is the policy by which earlier versions refused
// a limited operator resources from other namespaces, bound once per
// limited operator with its IntegrationOperator as parameter. It keeps
// guarding the operators not yet re-installed or upgraded; each re-install,
// upgrade or uninstall deletes its operator's binding, and the last one the
// policy (pruneLegacyNamespaces).
const legacyNamespacesPolicy = "caravan-operator-namespaces"

// legacyNamespacesBinding is legacyNamespacesPolicy's binding to operator id.
func legacyNamespacesBinding(id string) *admissionv1.ValidatingAdmissionPolicyBinding {
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: legacyNamespacesPolicy + "-" + id}}
}
