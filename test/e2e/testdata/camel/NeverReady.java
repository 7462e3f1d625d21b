import java.util.Map;

import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.health.HealthCheckRegistry;
import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.impl.health.AbstractHealthCheck;

// A route beside a readiness check that is never up, as Camel K's never-ready case has it.
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
    }
}
