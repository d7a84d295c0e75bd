// Package controlplane runs etcd and the upstream Kubernetes control-plane components,
// plus the small helpers (pki, free-ports) the local-cluster driver needs.
package controlplane

import (
	"os"

	_ "time/tzdata" // CronJob time zones must resolve without the host's tzdata.

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// runCobra runs an upstream command on args; main has already set os.Args to match.
func runCobra(cmd *cobra.Command, args []string) int {
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

// APIServerMain runs kube-apiserver with the given flags.
func APIServerMain(args []string) int {
	return runCobra(apiserver.NewAPIServerCommand(), args)
}

// ControllerManagerMain runs kube-controller-manager with the given flags.
func ControllerManagerMain(args []string) int {
	return runCobra(controllermanager.NewControllerManagerCommand(), args)
}

// SchedulerMain runs kube-scheduler with the given flags.
func SchedulerMain(args []string) int {
	return runCobra(scheduler.NewSchedulerCommand(), args)
}

// KubectlMain runs kubectl; it reads os.Args itself (plugin lookup), so main rewrites them.
func KubectlMain(args []string) int {
	// Verbosity is set before the command is built so construction-time logs honour -v.
	_, _ = logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args))
	cmd := kubectlcmd.NewDefaultKubectlCommand()
	cmd.SetArgs(args)
	if err := cli.RunNoErrOutput(cmd); err != nil {
		// CheckErr prints kubectl's usual error text and exits with its usual codes.
		kubectlutil.CheckErr(err)
		return 1
	}
	return 0
}
