"""The EKS VPC: public subnets for load balancers and NAT, private subnets for every node, and
an S3 gateway endpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

VPC_CIDR = "10.0.0.0/16"
PUBLIC_CIDRS = ("10.0.0.0/20", "10.0.16.0/20", "10.0.32.0/20")
PRIVATE_CIDRS = ("10.0.64.0/18", "10.0.128.0/18", "10.0.192.0/18")


def subnet_tags(cluster_name: str, public: bool) -> dict[str, str]:
    """Tags EKS and the load balancer controller use to place public/internal load balancers."""
    role = "kubernetes.io/role/elb" if public else "kubernetes.io/role/internal-elb"
    return {role: "1", f"kubernetes.io/cluster/{cluster_name}": "shared"}


class EksNetwork(pulumi.ComponentResource):
    """VPC, one public and one private subnet per zone, an internet gateway, a NAT gateway and
    an S3 gateway endpoint on both route tables."""

    def __init__(
        self,
        name: str,
        cluster_name: str,
        region: str,
        zones: Sequence[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:aws:EksNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=VPC_CIDR,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={"Name": name},
            opts=child,
        )
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, opts=child)
        public_rt = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": igw.id}],
            opts=child,
        )
        self.public_subnet_ids = [
            self._subnet(name, cluster_name, "public", zone, PUBLIC_CIDRS[i], vpc, public_rt, child)
            for i, zone in enumerate(zones)
        ]
        eip = aws.ec2.Eip(f"{name}-nat", domain="vpc", opts=child)
        nat = aws.ec2.NatGateway(
            f"{name}-nat", allocation_id=eip.id, subnet_id=self.public_subnet_ids[0], opts=child
        )
        private_rt = aws.ec2.RouteTable(
            f"{name}-private",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
            opts=child,
        )
        self.private_subnet_ids = [
            self._subnet(
                name, cluster_name, "private", zone, PRIVATE_CIDRS[i], vpc, private_rt, child
            )
            for i, zone in enumerate(zones)
        ]
        # S3 traffic (model downloads, image layers) stays on AWS's network instead of going
        # through the single NAT gateway (its zone, its per-GB charge)
        aws.ec2.VpcEndpoint(
            f"{name}-s3",
            vpc_id=vpc.id,
            service_name=f"com.amazonaws.{region}.s3",
            vpc_endpoint_type="Gateway",
            route_table_ids=[private_rt.id, public_rt.id],
            opts=child,
        )
        self.vpc_id = vpc.id
        self.register_outputs({"vpcId": vpc.id, "privateSubnetIds": self.private_subnet_ids})

    @staticmethod
    def _subnet(
        name: str,
        cluster_name: str,
        kind: str,
        zone: str,
        cidr: str,
        vpc: Any,
        route_table: Any,
        child: pulumi.ResourceOptions,
    ) -> pulumi.Output[str]:
        """One subnet of ``kind`` (public/private) in ``zone``, tagged and routed."""
        subnet = aws.ec2.Subnet(
            f"{name}-{kind}-{zone}",
            vpc_id=vpc.id,
            cidr_block=cidr,
            availability_zone=zone,
            tags=subnet_tags(cluster_name, public=kind == "public"),
            opts=child,
        )
        aws.ec2.RouteTableAssociation(
            f"{name}-{kind}-{zone}", subnet_id=subnet.id, route_table_id=route_table.id, opts=child
        )
        return subnet.id
