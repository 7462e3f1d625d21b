import java.util.Map;

import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.health.HealthCheckRegistry;
import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.impl.health.AbstractHealthCheck;

// A route beside a readiness check that is never up, as Camel K's never-ready case has it, and a
// route that another stops once, as Camel K's stopped-route case does through JMX.
public class NeverReady extends RouteBuilder {
    @Override
    public void configure() {
        HealthCheckRegistry.get(getContext()).register(new AbstractHealthCheck("never-ready") {
            @Override
            public boolean isLiveness() {
                return false;
            }

            @Override
            protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
                builder.down();
            }
        });
        from("timer:never-ready?period=1000").log("not ready yet");
        from("timer:stopped?period=1000").routeId("stopped").log("about to be stopped");
        from("timer:stopper?delay=2000&repeatCount=1").routeId("stopper")
            .process(e -> e.getContext().getRouteController().stopRoute("stopped"))
            .log("stopped the route stopped");
    }
}
